package gossip

import (
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

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
	p := natstest.StartStallProxy(t, s.URL[len("nats://"):])
	nc, err := Connect(p.URL(), nats.SetCustomDialer(natstest.SmallBuffers{}))
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
