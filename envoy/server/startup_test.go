package server_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hookedListener is a listener that records its Close and, when addr is
// set, calls it at the first Addr (Serve asks for the gRPC listener's
// address just before it starts serving gRPC).
type hookedListener struct {
	net.Listener
	addr   func()
	called atomic.Bool
	closed atomic.Bool
}

func (l *hookedListener) Addr() net.Addr {
	if l.addr != nil && l.called.CompareAndSwap(false, true) {
		l.addr()
	}
	return l.Listener.Addr()
}

func (l *hookedListener) Close() error {
	l.closed.Store(true)
	return l.Listener.Close()
}

// listen is a hookedListener on a free port.
func listen(t *testing.T, addr func()) *hookedListener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return &hookedListener{Listener: l, addr: addr}
}

// newServer builds a server on the local backend without serving it.
func newServer(t *testing.T) *server.Server {
	t.Helper()
	o := withConfig(t, localOpts(core.NewManualClock(t0)), slidingRules)
	o.ReloadInterval = 1_000_000 // 1 ms: the reload loop runs
	srv, err := server.New(o)
	require.NoError(t, err)
	return srv
}

// TestShutdownBeforeServe: a stop asked before Serve runs (a SIGTERM
// right at start) leaves Serve nothing to do: it returns nil, as after
// any graceful stop, and closes both listeners. It catches a Serve that
// starts gRPC on a stopped server (grpc.ErrServerStopped: exit 1) or
// starts its loops after Shutdown waited for them.
func TestShutdownBeforeServe(t *testing.T) {
	srv := newServer(t)
	require.NoError(t, srv.Shutdown(context.Background()))
	gl, hl := listen(t, nil), listen(t, nil)
	assert.NoError(t, srv.Serve(gl, hl), "Serve after Shutdown")
	assert.True(t, gl.closed.Load(), "the gRPC listener is closed")
	assert.True(t, hl.closed.Load(), "the HTTP listener is closed")
}

// TestShutdownWhileServeStarts: Shutdown runs to its end while Serve is
// starting (its loops started, gRPC not yet serving: the listener's Addr
// hook calls Shutdown there); Serve then returns nil, and the race
// detector sees Shutdown's wait for the loops ordered after their start.
// It catches grpc.ErrServerStopped surfacing from a stop at startup.
func TestShutdownWhileServeStarts(t *testing.T) {
	srv := newServer(t)
	stopped := make(chan error, 1)
	gl := listen(t, func() { stopped <- srv.Shutdown(context.Background()) })
	hl := listen(t, nil)
	assert.NoError(t, srv.Serve(gl, hl), "Serve when stopped while starting")
	assert.NoError(t, <-stopped, "Shutdown")
	assert.True(t, gl.closed.Load(), "the gRPC listener is closed")
}
