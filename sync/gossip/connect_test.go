package gossip

import (
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hang is how long a wait on an event may take before the test calls it a
// hang: far beyond any delay of a loaded machine.
const hang = 30 * time.Second

// receiveAll waits for want payloads on ch (bounded by hang).
func receiveAll(t *testing.T, ch <-chan string, want int) {
	t.Helper()
	deadline := time.After(hang)
	for got := 0; got < want; got++ {
		select {
		case <-ch:
		case <-deadline:
			require.FailNow(t, fmt.Sprintf("received %d of %d payloads within %s", got, want, hang))
		}
	}
}

// connectSubscribed returns a Connect'ed connection with a Transport
// subscribed on it, whose payloads arrive on the channel.
func connectSubscribed(t *testing.T, url string) (*nats.Conn, *Transport, <-chan string) {
	t.Helper()
	nc, err := Connect(url, nats.Name("connect-test"))
	require.NoError(t, err, "Connect(%s)", url)
	t.Cleanup(nc.Close)
	tr := NewTransport(nc, "ct")
	ch := make(chan string, 64)
	_, err = tr.Subscribe(func(p []byte) { ch <- string(p) })
	require.NoError(t, err, "Subscribe")
	return nc, tr, ch
}

// TestConnectBeforeNATSIsUp: a PoP that starts while NATS is down gets a
// connection (nats.Connect with its defaults fails), publishes into the
// buffer without error, and once the server is up its subscription and
// its buffered payloads go through.
func TestConnectBeforeNATSIsUp(t *testing.T) {
	s := natstest.Start(t)
	s.Shutdown()
	plain, err := nats.Connect(s.URL)
	if err == nil {
		plain.Close()
	}
	require.Error(t, err, "nats.Connect with defaults succeeded with the server down; the test shows nothing")
	nc, tr, ch := connectSubscribed(t, s.URL)
	require.False(t, nc.IsConnected(), "connected to a server that is down")
	for i := 0; i < 5; i++ {
		err := tr.Publish([]byte("while down"))
		require.NoError(t, err, "Publish while NATS is down")
	}
	s.Restart()
	receiveAll(t, ch, 5)
}

// TestConnectRidesOutRestarts: through several server restarts the
// connection comes back by itself, once per restart (the time between
// tries is an option, checked by TestConnectOptionsValues, not timed here),
// and what was published while it was away is delivered.
func TestConnectRidesOutRestarts(t *testing.T) {
	s := natstest.Start(t)
	nc, tr, ch := connectSubscribed(t, s.URL)
	for round := 0; round < 3; round++ {
		s.Shutdown()
		waitStatus(t, nc, false)
		for i := 0; i < 3; i++ {
			err := tr.Publish([]byte("buffered"))
			require.NoError(t, err, "round %d: Publish while down", round)
		}
		s.Restart()
		waitStatus(t, nc, true)
		assert.Equal(t, uint64(round+1), nc.Stats().Reconnects, "round %d: reconnections counted after %d restarts", round, round+1)
		receiveAll(t, ch, 3)
	}
}

// TestConnectBufferBounded: while disconnected, a publish past the 8 MiB
// buffer fails with core.ErrUnavailable instead of blocking: the publishes
// run while the server stays down, so one that blocked would wait for a
// reconnection that never comes, and the test would see the hang.
func TestConnectBufferBounded(t *testing.T) {
	s := natstest.Start(t)
	nc, tr, _ := connectSubscribed(t, s.URL)
	s.Shutdown()
	waitStatus(t, nc, false)
	payload := make([]byte, 1<<20)
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 20 && err == nil; i++ {
			err = tr.Publish(payload)
		}
	}()
	select {
	case <-done:
	case <-time.After(hang):
		require.FailNow(t, fmt.Sprintf("20 MiB published while NATS is down: still blocked after %s", hang))
	}
	require.ErrorIs(t, err, core.ErrUnavailable, "20 MiB published while down: err %v; want core.ErrUnavailable wrapping nats.ErrReconnectBufExceeded", err)
	require.ErrorIs(t, err, nats.ErrReconnectBufExceeded, "20 MiB published while down: err %v; want core.ErrUnavailable wrapping nats.ErrReconnectBufExceeded", err)
}

// TestConnectOptionsValues: the options set what the doc says, and extra
// options passed to Connect override them.
func TestConnectOptionsValues(t *testing.T) {
	o := nats.GetDefaultOptions()
	for _, opt := range append(ConnectOptions(), nats.ReconnectWait(time.Second)) {
		err := opt(&o)
		require.NoError(t, err)
	}
	assert.Equal(t, -1, o.MaxReconnect, "max reconnects: want -1 (forever)")
	assert.True(t, o.RetryOnFailedConnect, "retry on failed connect: want true")
	assert.Equal(t, 8<<20, o.ReconnectBufSize, "reconnect buffer: want 8 MiB")
	assert.Equal(t, 100*time.Millisecond, o.ReconnectJitter, "reconnect jitter")
	assert.Equal(t, 5*time.Second, o.PingInterval, "ping interval")
	assert.Equal(t, 2, o.MaxPingsOut, "pings out before the connection counts as lost")
	assert.Equal(t, 5*time.Second, o.FlusherTimeout, "write timeout")
	assert.Equal(t, time.Second, o.ReconnectWait, "a later option did not override: ReconnectWait %s", o.ReconnectWait)
}

// waitStatus waits for nc to be connected (up) or not, polling every 5 ms
// (nats.go's status callbacks are the caller's options, taken by Connect's
// defaults here), bounded by hang.
func waitStatus(t *testing.T, nc *nats.Conn, up bool) {
	t.Helper()
	require.Eventually(t, func() bool { return nc.IsConnected() == up }, hang, 5*time.Millisecond,
		"connection status %v after %s; want connected=%v", nc.Status(), hang, up)
}
