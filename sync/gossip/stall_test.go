package gossip

import (
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/edgelimit/edgelimit/internal/natstest"
)

// stallProxy is a TCP proxy to a NATS server that, once stalled, stops
// reading what clients send: a server (or a network path) that vanished
// without closing TCP, or one too slow to read. Replies still flow.
type stallProxy struct {
	ln      net.Listener
	target  string
	stalled chan struct{} // closed: stop reading from clients
	done    chan struct{} // closed at the test's end: drop every connection
	once    sync.Once
}

func startStallProxy(t *testing.T, target string) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &stallProxy{ln: ln, target: target, stalled: make(chan struct{}), done: make(chan struct{})}
	t.Cleanup(func() { ln.Close(); close(p.done) })
	go p.serve()
	return p
}

func (p *stallProxy) URL() string { return "nats://" + p.ln.Addr().String() }

func (p *stallProxy) Stall() { p.once.Do(func() { close(p.stalled) }) }

func (p *stallProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		_ = c.(*net.TCPConn).SetReadBuffer(16 << 10)
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		go func() { _, _ = io.Copy(c, s); c.Close() }()
		go func() {
			buf := make([]byte, 4096)
			for {
				select {
				case <-p.stalled:
					<-p.done // read nothing more, keep the connection open
					c.Close()
					s.Close()
					return
				default:
				}
				n, err := c.Read(buf)
				if n > 0 {
					_, _ = s.Write(buf[:n])
				}
				if err != nil {
					s.Close()
					return
				}
			}
		}()
	}
}

// smallBuffers dials with a 16 KiB socket send buffer, so a stalled
// reader fills it after a few payloads rather than megabytes.
type smallBuffers struct{}

func (smallBuffers) Dial(network, address string) (net.Conn, error) {
	c, err := net.Dial(network, address)
	if err == nil {
		_ = c.(*net.TCPConn).SetWriteBuffer(16 << 10)
	}
	return c, err
}

// TestConnectPublishBoundedOnAStalledServer: with the server still
// connected but reading nothing, Publish of 64 KiB payloads (a budget
// Limiter's gossip, from its Sync loop) returns instead of blocking on the
// socket: a write that does not complete within the connection's write
// timeout (5 s) drops the connection, and publishes go to the reconnect
// buffer (or fail when it is full) as with a server that is down.
// nats.go's default write timeout, a minute, held every Publish and every
// other use of the connection (its Unsubscribe in a Limiter's Close) that
// long; the test calls that a hang. Mutation it catches: ConnectOptions
// without its FlusherTimeout.
func TestConnectPublishBoundedOnAStalledServer(t *testing.T) {
	// stallHang calls a hang what outlasts 9 write timeouts (a loaded
	// machine took 10 s) and still falls short of nats.go's default of a
	// minute, which the test must catch.
	const stallHang = 45 * time.Second
	s := natstest.Start(t)
	p := startStallProxy(t, s.URL[len("nats://"):])
	nc, err := Connect(p.URL(), nats.SetCustomDialer(smallBuffers{}))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	waitStatus(t, nc, true)
	tr := NewTransport(nc, "stall")
	p.Stall()
	payload := make([]byte, 64<<10)
	published, errs := 0, 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 200; i++ {
			if err := tr.Publish(payload); err != nil {
				errs++
				continue
			}
			published++
		}
	}()
	select {
	case <-done:
	case <-time.After(stallHang):
		require.FailNow(t, fmt.Sprintf("200 payloads of 64 KiB published to a stalled server: still blocked after %s", stallHang))
	}
	t.Logf("published %d, refused %d", published, errs)
	waitStatus(t, nc, false) // the connection was dropped: it reconnects
	require.NotEqual(t, nats.CLOSED, nc.Status(), "the connection was closed, not kept reconnecting")
	if err := tr.Publish([]byte("buffered")); err != nil {
		require.ErrorIs(t, err, nats.ErrReconnectBufExceeded, "a publish while reconnecting goes to the buffer, or fails when it is full")
	}
}
