// Package natstest gives tests a real NATS server, embedded in the test
// process on a free loopback port, that can be shut down and restarted on the
// same port for fault tests. A test that cannot start it fails loudly; it
// never skips.
package natstest

import (
	"crypto/tls"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/freeport"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

// readyWait bounds how long Start and Restart wait for the server to accept
// connections (and WaitRouted for routes): what only a hang reaches on a
// loaded machine.
const readyWait = 30 * time.Second

// Server is an embedded NATS server bound to one loopback port for its whole
// life. Its zero value is not usable: get one from Start.
type Server struct {
	t    testing.TB
	opts server.Options
	mu   sync.Mutex
	srv  *server.Server
	// URL is the nats:// address clients connect to; it survives restarts.
	URL string
}

// Start launches an embedded NATS server on a free port of 127.0.0.1 and
// shuts it down in t.Cleanup. It calls t.Fatal when the server cannot start.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, nil)
}

// StartWithToken is Start for a server that admits only clients presenting
// token (nats.Token), to show that authentication is the client
// connection's business and passes through the library untouched.
func StartWithToken(t testing.TB, token string) *Server {
	t.Helper()
	return start(t, func(o *server.Options) { o.Authorization = token })
}

// StartWithUser is Start for a server that admits only clients presenting
// user and password (nats.UserInfo).
func StartWithUser(t testing.TB, user, password string) *Server {
	t.Helper()
	return start(t, func(o *server.Options) { o.Username, o.Password = user, password })
}

// StartWithTLS is Start for a server that speaks only TLS with config (see
// tlstest.Material.Server); when config requires client certificates
// (tls.RequireAndVerifyClientCert) clients without one signed by its
// ClientCAs are refused. URL stays nats://: the server's INFO tells clients
// to upgrade, and the client's own TLS options (nats.Secure, nats.RootCAs,
// nats.ClientCert) decide whether it can.
func StartWithTLS(t testing.TB, config *tls.Config) *Server {
	t.Helper()
	return start(t, func(o *server.Options) {
		o.TLSConfig = config
		o.TLSVerify = config.ClientAuth == tls.RequireAndVerifyClientCert
		o.TLSTimeout = 2 // seconds
	})
}

// start launches a server with the common options, changed by mod when not
// nil.
func start(t testing.TB, mod func(*server.Options)) *Server {
	t.Helper()
	port, err := freeport.Get()
	require.NoError(t, err, "natstest: no free port")
	s := &Server{t: t, opts: server.Options{Host: "127.0.0.1", Port: port,
		NoLog: true, NoSigs: true, MaxPayload: 4 << 20}}
	if mod != nil {
		mod(&s.opts)
	}
	s.URL = (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}).String()
	s.URL = "nats://" + s.URL
	s.launch()
	t.Cleanup(s.Shutdown)
	return s
}

func (s *Server) launch() {
	s.t.Helper()
	opts := s.opts
	srv, err := server.NewServer(&opts)
	if err != nil {
		s.t.Fatalf("natstest: cannot create NATS server: %v", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(readyWait) {
		srv.Shutdown()
		s.t.Fatalf("natstest: NATS server on %s not ready after %s", s.URL, readyWait)
	}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
}

// Shutdown stops the server; clients see a disconnect. It is safe to call
// when the server is already down.
func (s *Server) Shutdown() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
	}
}

// Restart starts the server again on the same port after Shutdown (it shuts
// it down first when running). Clients created by Connect reconnect by
// themselves.
func (s *Server) Restart() {
	s.t.Helper()
	s.Shutdown()
	s.launch()
}

// Running reports whether the server is up.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv != nil
}

// Connect returns a client that reconnects forever (every 20ms) and buffers
// publishes while disconnected instead of blocking, closed in t.Cleanup.
// extra options are applied after those.
func (s *Server) Connect(t testing.TB, extra ...nats.Option) *nats.Conn {
	t.Helper()
	opts := append(ClientOptions(), extra...)
	nc, err := nats.Connect(s.URL, opts...)
	require.NoError(t, err, "natstest: connect %s", s.URL)
	t.Cleanup(nc.Close)
	return nc
}

// ClientOptions are the tests' nats.go options: endless reconnects with a
// 20 ms wait (tests restart servers and want the client back at once) and
// a bounded reconnect buffer, so publishing while disconnected neither
// blocks nor panics. A PoP should use gossip.Connect or
// gossip.ConnectOptions, whose waits suit a real network.
func ClientOptions() []nats.Option {
	return []nats.Option{
		nats.MaxReconnects(-1),
		nats.ReconnectWait(20 * time.Millisecond),
		nats.ReconnectJitter(0, 0),
		nats.ReconnectBufSize(8 << 20),
		nats.RetryOnFailedConnect(true),
		nats.Timeout(2 * time.Second),
	}
}
