package budget

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGossipForgedCountBound: gossip carries no proof, so a client that
// may publish on a limit's subject makes a PoP deny an identity it holds
// that Redis has counted 2 units of (pure Redis admits it): the trust
// boundary docs/budget.md ("Gossip", "Who may publish") states. The test
// pins how far such a message reaches, on a real Redis and NATS: the
// largest count of the PoP's window denies k to the end of the next
// window and not a millisecond past it; a count of a window after the
// PoP's, of two windows before it, another window length's, and an
// identity the PoP does not hold deny nothing and create nothing.
// Mutations it catches: Hear reading a future window's count as the
// current one's, or an older window's as the previous one's; Hear making
// entries for identities it does not hold.
func TestGossipForgedCountBound(t *testing.T) {
	rdb, _ := redistest.Client(t)
	srv := natstest.Start(t)
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	ctx := context.Background()
	b := gossipPoP(t, rdb, srv.Connect(t), clock, "b")
	for range 2 { // b holds a full entry of k: its free unit, then a unit Redis decides
		d, err := b.Allow(ctx, "k")
		require.NoError(t, err)
		require.True(t, d.Allowed, "b admits k: %+v", d)
	}
	x := int64(w0 / testWindow)
	tr := Transport(srv.Connect(t), b.m.Keyspace())
	heard := uint64(0)
	send := func(window, wm int64, key string) {
		t.Helper()
		p, err := gossip.Marshal(gossip.Message{PoP: "forger#1", SentAt: clock.Now(), WindowMillis: wm,
			Entries: []gossip.Entry{{Key: key, Window: window, Count: gossip.MaxCount}}})
		require.NoError(t, err)
		require.NoError(t, tr.Publish(p))
		require.NoError(t, tr.Publish([]byte("barrier"))) // delivered after p: b has applied p once it is counted
		heard++
		require.Eventually(t, func() bool { return b.Stats().GossipMalformed == heard }, hang, 5*time.Millisecond, "b hears the subject")
	}
	before := b.m.Len()
	send(x+1, testWindow, "k")          // the window after b's
	send(x-2, testWindow, "k")          // two windows before b's
	send(x, testWindow+1, "k")          // another window length
	send(x, testWindow, "not-held-key") // an identity b does not hold
	assert.Zero(t, b.Stats().GossipDenies, "a count outside b's two windows, of another window length or of an identity b does not hold denied")
	assert.Equal(t, before, b.m.Len(), "hearing made an entry")

	send(x, testWindow, "k")
	require.Equal(t, uint64(1), b.Stats().GossipDenies, "the largest count of b's window denies k")
	b.mu.Lock()
	defer b.mu.Unlock()
	_, c := b.m.Request((x+2)*testWindow-1, "k", 1)
	assert.Nil(t, c, "denied from the cache to the end of window x+1")
	d, c := b.m.Request((x+2)*testWindow, "k", 1)
	assert.False(t, c == nil && d.Source == SrcDenyCache, "the forged count still denies k in window x+2: %+v", d)
}
