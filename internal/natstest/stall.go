package natstest

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// StallProxy is a TCP proxy to a NATS server that, once stalled, stops
// reading what clients send (a server or a network path that went silent
// without closing TCP, or one too slow to read) while keeping their
// connections open and replies flowing; Release drops every connection,
// so a write blocked on one fails. Build it with StartStallProxy.
type StallProxy struct {
	ln      net.Listener
	target  string
	stalled chan struct{}
	dropped chan struct{}
	once    [2]sync.Once
}

// StartStallProxy proxies to target (host:port) until the test ends, when
// it releases every connection.
func StartStallProxy(t testing.TB, target string) *StallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &StallProxy{ln: ln, target: target, stalled: make(chan struct{}), dropped: make(chan struct{})}
	t.Cleanup(func() { ln.Close(); p.Release() })
	go p.serve()
	return p
}

// URL is the proxy's nats:// address.
func (p *StallProxy) URL() string { return "nats://" + p.ln.Addr().String() }

// Stall stops reading from the clients.
func (p *StallProxy) Stall() { p.once[0].Do(func() { close(p.stalled) }) }

// Release drops every connection.
func (p *StallProxy) Release() { p.once[1].Do(func() { close(p.dropped) }) }

func (p *StallProxy) serve() {
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
		go p.pump(c, s)
	}
}

// pump copies what client c sends to server s until stalled.
func (p *StallProxy) pump(c, s net.Conn) {
	defer s.Close()
	defer c.Close()
	buf := make([]byte, 4096)
	for {
		select {
		case <-p.stalled:
			<-p.dropped // read nothing more, keep the connection open
			return
		default:
		}
		n, err := c.Read(buf)
		if n > 0 {
			_, _ = s.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// SmallBuffers is a nats.CustomDialer that dials with a 16 KiB socket
// send buffer, so a writer to a stalled reader blocks after kilobytes,
// not megabytes.
type SmallBuffers struct{}

// Dial dials address with a 16 KiB send buffer.
func (SmallBuffers) Dial(network, address string) (net.Conn, error) {
	c, err := net.Dial(network, address)
	if err == nil {
		_ = c.(*net.TCPConn).SetWriteBuffer(16 << 10)
	}
	return c, err
}
