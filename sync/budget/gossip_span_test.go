package budget

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGossipFarWindowsPublished: one Sync's gossip may name identities
// Redis found over their limit in windows far apart (requests stamped
// far apart on a Limiter given a clock, or a Redis clock that jumped,
// with windows of a millisecond 2^20 of them are 17 minutes): what a
// payload can span (2^20 windows) splits it, and nothing is lost. The
// Limiter counted the whole Sync's gossip lost (GossipLost 1, nothing
// published) when gossip.Encode refused the span. Mutation it catches:
// Encode taking one base window for every payload of a message.
func TestGossipFarWindowsPublished(t *testing.T) {
	rdb, _ := redistest.Client(t)
	srv := natstest.Start(t)
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	l := gossipPoP(t, rdb, srv.Connect(t), clock, "a")
	got := make(chan *nats.Msg, 16)
	raw := srv.Connect(t)
	_, err := raw.ChanSubscribe(Subject(l.m.Keyspace()), got)
	require.NoError(t, err)
	require.NoError(t, raw.Flush())

	far := int64(w0 + (1<<20)*testWindow) // 2^20 windows after w0
	l.mu.Lock()
	overLimit(l.m, "then", w0+5, 10, 4)
	overLimit(l.m, "now", far+5, 10, 4)
	l.mu.Unlock()
	require.NoError(t, l.Sync(context.Background()))
	require.Zero(t, l.Stats().GossipLost, "a Sync's gossip counted lost")

	heard := map[int64]string{}
	for timeout := time.After(hang); len(heard) < 4; {
		select {
		case m := <-got:
			msg, err := gossip.Decode(m.Data)
			require.NoError(t, err)
			for _, e := range msg.Entries {
				heard[e.Window] = e.Key
			}
		case <-timeout:
			require.FailNow(t, "entries heard within a minute", "%v", heard)
		}
	}
	x := int64(w0 / testWindow)
	assert.Equal(t, map[int64]string{x: "then", x - 1: "then", x + 1<<20: "now", x + 1<<20 - 1: "now"}, heard)
}
