package budget

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tellMany has l's Machine find n identities over their limit at Redis
// (as a reply would), so its next Sync gossips them: about 14n bytes.
func tellMany(l *Limiter, round, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := int64(w0 + 5)
	for i := range n {
		overLimit(l.m, fmt.Sprintf("s%d-%d", round, i), now, 10, 4)
	}
}

// TestGossipStalledNATSHoldsNoSync: on a NATS connection whose server
// stopped reading (a proxy that stalls, the connection still open, the
// user's own *nats.Conn with a long write timeout), a Limiter's Syncs go
// on while their gossip cannot be written: 200 Syncs, each with ~28 KB of
// gossip, all return; what the bounded queue cannot hold is dropped and
// counted in GossipLost, Close returns too, and once the connection is
// dropped the publisher ends (no goroutine left behind). Publishing from
// the Sync itself blocked the first Sync that filled the socket, and with
// it every later Sync and Close, for the connection's write timeout.
// Mutations it catches: publish writing to NATS on the Sync's goroutine;
// the queue send blocking when full; Close unsubscribing on its own
// goroutine.
func TestGossipStalledNATSHoldsNoSync(t *testing.T) {
	rdb, _ := redistest.Client(t)
	srv := natstest.Start(t)
	p := natstest.StartStallProxy(t, strings.TrimPrefix(srv.URL, "nats://"))
	nc, err := nats.Connect(p.URL(), nats.SetCustomDialer(natstest.SmallBuffers{}),
		nats.FlusherTimeout(time.Hour), nats.PingInterval(time.Hour), nats.ReconnectWait(time.Hour))
	require.NoError(t, err)
	t.Cleanup(func() { p.Release(); nc.Close() })
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	l, err := New(Config{PoP: "a", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2}, rdb, clock)
	require.NoError(t, err)
	require.NoError(t, l.UseNATS(nc))
	ctx := context.Background()
	p.Stall()

	const syncs = 200
	ran := make(chan int, syncs)
	go func() {
		defer close(ran)
		for i := range syncs {
			tellMany(l, i, 1000)
			_ = l.Sync(ctx)
			ran <- i + 1
		}
	}()
	done := 0
	for timeout := time.After(hang); done < syncs; {
		select {
		case n, ok := <-ran:
			if !ok {
				require.FailNow(t, "the Sync goroutine ended early")
			}
			done = n
		case <-timeout:
			require.FailNow(t, fmt.Sprintf("%d of %d Syncs ran in %s: a Sync waits on a stalled NATS write", done, syncs, hang))
		}
	}
	st := l.Stats()
	assert.Equal(t, uint64(syncs), st.GossipSent, "every Sync made its message")
	assert.NotZero(t, st.GossipLost, "the queue was full on a stalled connection: drops counted")

	closed := make(chan error, 1)
	go func() { closed <- l.Close(ctx) }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(hang):
		require.FailNow(t, fmt.Sprintf("Close waited %s on a stalled NATS write", hang))
	}
	p.Release() // the blocked write fails: the publisher drains its queue and ends
	select {
	case <-l.gossipDone():
	case <-time.After(hang):
		require.FailNow(t, fmt.Sprintf("the publisher still runs %s after Close and the connection's drop", hang))
	}
}

// gossipDone is closed once l's publisher has ended (it never ends
// without UseNATS and Close).
func (l *Limiter) gossipDone() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pub.done
}

// TestGossipQueueDropsOldest: a Sync that finds the publisher's queue
// full (publishQueue payloads) drops the oldest, keeps its own, and
// counts one loss per payload dropped; a closed queue drops all offered.
// Mutation it catches: dropping the newest payload (a fresher count)
// instead.
func TestGossipQueueDropsOldest(t *testing.T) {
	p := &publisher{queue: make(chan []byte, publishQueue)} // no goroutine: nothing leaves the queue
	var all [][]byte
	for i := range publishQueue + 2 {
		all = append(all, []byte{byte(i)})
	}
	assert.Zero(t, p.offer(all[:publishQueue]), "the queue holds %d payloads", publishQueue)
	assert.Equal(t, uint64(2), p.offer(all[publishQueue:]), "two dropped")
	require.Len(t, p.queue, publishQueue)
	assert.Equal(t, []byte{2}, <-p.queue, "the two oldest were dropped")
	p.end()
	p.end() // twice: nothing more
	assert.Equal(t, uint64(1), p.offer(all[:1]), "a closed queue drops what is offered")
}
