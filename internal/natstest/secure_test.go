package natstest

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/tlstest"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

// TestStartWithUser: a client with the user and password gets messages
// through; anonymous clients and a wrong password are refused, and the
// refusal does not echo the password tried.
func TestStartWithUser(t *testing.T) {
	s := StartWithUser(t, "edge", "pa55-word")
	nc := s.Connect(t, nats.UserInfo("edge", "pa55-word"))
	roundTrip(t, nc)
	for name, opts := range map[string][]nats.Option{
		"anonymous":      nil,
		"wrong password": {nats.UserInfo("edge", "guess-word")},
	} {
		nc, err := nats.Connect(s.URL, append(opts, nats.Timeout(2*time.Second))...)
		if err == nil {
			nc.Close()
		}
		require.Error(t, err, "%s: connected", name)
		require.NotContains(t, err.Error(), "word", "%s: error %q shows the password", name, err)
	}
}

// TestStartWithTLS: a client with the CA and a client certificate gets
// messages through a TLS-only server; a raw plaintext client gets no PONG;
// a default nats.go client (which the server's INFO upgrades to TLS with
// the system roots), a client of another CA and a client trusting the CA
// without a certificate are refused; and the server itself refuses a
// client that trusts its CA but presents another CA's client certificate.
func TestStartWithTLS(t *testing.T) {
	m, other := tlstest.New(t), tlstest.New(t)
	s := StartWithTLS(t, m.Server)
	roundTrip(t, s.Connect(t, nats.Secure(m.Client)))
	plaintextRefused(t, s.URL)
	for name, opts := range map[string][]nats.Option{
		"plain":          nil,
		"another CA":     {nats.Secure(other.Client)},
		"no client cert": {nats.RootCAs(m.CA)},
	} {
		nc, err := nats.Connect(s.URL, append(opts, nats.Timeout(2*time.Second))...)
		if err == nil {
			nc.Close()
		}
		require.Error(t, err, "%s client connected to a TLS-only server requiring client certificates", name)
		t.Logf("%s: %v", name, err)
	}
	foreignCertRefused(t, s.URL, m, other)
}

// foreignCertRefused: a client that trusts m's CA (so it accepts the
// server) but presents other's client certificate must be refused by the
// server: nats.Connect fails, not because the client distrusts the server
// (no unknown-authority error on the client's side) but with the server's
// TLS alert, which under TLS 1.3 reaches the client at its first read
// after the handshake (waiting for the PONG to its CONNECT). Should
// Connect return a connection, a round trip on it must fail.
func foreignCertRefused(t *testing.T, url string, m, other *tlstest.Material) {
	t.Helper()
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: m.Pool,
		Certificates: other.Client.Certificates}
	nc, err := nats.Connect(url, nats.Secure(cfg), nats.Timeout(2*time.Second),
		nats.NoReconnect())
	if err == nil {
		defer nc.Close()
		ferr := nc.FlushTimeout(2 * time.Second)
		require.False(t, ferr == nil && !nc.IsClosed(), "client certificate of another CA: connected and got a PONG from a server requiring certificates of its CA")
		t.Logf("client certificate of another CA: connected, then cut off (%v)", nc.LastError())
		return
	}
	require.False(t, errors.As(err, new(x509.UnknownAuthorityError)), "client certificate of another CA: %v; the client refused the server, want the server to refuse the client", err)
	// The server refuses after the handshake: the client reads its alert,
	// or (when the server has already closed) finds the connection gone.
	require.True(t, serverRefused(err), "client certificate of another CA: %v; want the server's TLS alert or its closing the connection", err)
	t.Logf("client certificate of another CA: %v", err)
}

// serverRefused reports whether err is the server ending a TLS connection:
// its alert, or the connection it closed.
func serverRefused(err error) bool {
	for _, m := range []string{"remote error: tls:", "connection closed by remote", "broken pipe", "connection reset by peer"} {
		if strings.Contains(err.Error(), m) {
			return true
		}
	}
	return false
}

// roundTrip fails the test unless a message published on nc comes back to
// its own subscription.
func roundTrip(t *testing.T, nc *nats.Conn) {
	t.Helper()
	got := make(chan string, 16)
	_, err := nc.Subscribe("t.x", func(m *nats.Msg) { got <- string(m.Data) })
	require.NoError(t, err)
	err = nc.Flush()
	require.NoError(t, err)
	publishUntil(t, nc, got, "hello")
}

// plaintextRefused speaks the NATS protocol in clear text to url: the
// server's INFO must say tls_required and a PING must get no PONG.
func plaintextRefused(t *testing.T, url string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(url, "nats://"), 2*time.Second)
	require.NoError(t, err)
	defer c.Close()
	// The server closes a plaintext connection; the deadline only ends the
	// reads if it does not (then no PONG came back either, which is what is
	// checked): it bounds a hang, it is not a timing.
	c.SetDeadline(time.Now().Add(3 * time.Second))
	r := bufio.NewReader(c)
	info, err := r.ReadString('\n')
	require.NoError(t, err, "INFO %q (%v), want tls_required", info, err)
	require.Contains(t, info, `"tls_required":true`, "INFO %q (%v), want tls_required", info, err)
	if _, err := c.Write([]byte("CONNECT {\"verbose\":false}\r\nPING\r\n")); err != nil {
		return // refused already
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return // connection closed or nothing came back
		}
		require.False(t, strings.HasPrefix(line, "PONG"), "a plaintext client got PONG from a TLS-only server")
	}
}
