package budget

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGossipStaysWithItsLimit: two PoPs of 10 per window and one PoP of 4
// per window (one window length, one Namespace) gossip over one real NATS.
// Once the first limit's Redis count of k fills it and one PoP hears so
// from the other, a PoP of the second limit, which holds k far below its
// own limit, must not have heard it: a count of another limit says nothing
// of this one's (heard, 10 units would deny k at 4 per window). It then
// still admits k. (The barrier: that PoP's own publication on its own
// subject, sent after the first limit's gossip was delivered, reaches it
// after anything the first limit's gossip could have brought it.)
func TestGossipStaysWithItsLimit(t *testing.T) {
	rdb, _ := redistest.Client(t)
	srv := natstest.Start(t)
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	ctx := context.Background()
	lim := func(pop string, max int64) *Limiter {
		l, err := New(Config{PoP: pop, Limit: core.PerWindow(max, testWindow*time.Millisecond), PoPs: 2}, rdb, clock)
		require.NoError(t, err)
		require.NoError(t, l.UseNATS(srv.Connect(t)), "UseNATS on a live server")
		t.Cleanup(func() { l.Close(context.Background()) })
		return l
	}
	a, b, small := lim("a", 10), lim("b", 10), lim("s", 4)
	for range 2 { // small holds a full entry of k: its free unit, then a unit Redis decides
		d, err := small.Allow(ctx, "k")
		require.NoError(t, err)
		require.True(t, d.Allowed, "small admits k: %+v", d)
	}
	overLimitAcross(t, a, b, clock)
	require.NoError(t, small.tr.Publish([]byte("not gossip")))
	require.Eventually(t, func() bool { return small.Stats().GossipMalformed == 1 }, hang, 5*time.Millisecond,
		"small hears its own subject")
	assert.Zero(t, small.Stats().GossipDenies, "small denied k on another limit's counts")
	d, err := small.Allow(ctx, "k")
	require.NoError(t, err)
	assert.True(t, d.Allowed, "small admits k, under its own limit: %+v", d)
}
