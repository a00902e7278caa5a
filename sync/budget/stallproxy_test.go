package budget

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// stallProxy is a TCP proxy to a NATS server that, once stalled, stops
// reading what clients send (a server or path that went silent without
// closing TCP) while keeping their connections open; Release drops them,
// so a write blocked on one fails.
type stallProxy struct {
	ln      net.Listener
	target  string
	stalled chan struct{}
	dropped chan struct{}
	once    [2]sync.Once
}

// startStallProxy proxies to target (host:port) until the test ends.
func startStallProxy(t *testing.T, target string) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &stallProxy{ln: ln, target: target, stalled: make(chan struct{}), dropped: make(chan struct{})}
	t.Cleanup(func() { ln.Close(); p.Release() })
	go p.serve()
	return p
}

// URL is the proxy's nats:// address.
func (p *stallProxy) URL() string { return "nats://" + p.ln.Addr().String() }

// Stall stops reading from the clients.
func (p *stallProxy) Stall() { p.once[0].Do(func() { close(p.stalled) }) }

// Release drops every connection.
func (p *stallProxy) Release() { p.once[1].Do(func() { close(p.dropped) }) }

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
		go p.pump(c, s)
	}
}

// pump copies what client c sends to server s until stalled.
func (p *stallProxy) pump(c, s net.Conn) {
	defer s.Close()
	defer c.Close()
	buf := make([]byte, 4096)
	for {
		select {
		case <-p.stalled:
			<-p.dropped
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

// smallBuffers dials with a 16 KiB socket send buffer, so a stalled
// reader blocks a writer after kilobytes, not megabytes.
type smallBuffers struct{}

func (smallBuffers) Dial(network, address string) (net.Conn, error) {
	c, err := net.Dial(network, address)
	if err == nil {
		_ = c.(*net.TCPConn).SetWriteBuffer(16 << 10)
	}
	return c, err
}
