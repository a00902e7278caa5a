package budget

import (
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGossipHearRefusesOversized: a payload longer than any a Limiter
// publishes (gossipPayloadBytes) is refused unread, counted malformed,
// and applies nothing, though it names, last, a count that denies an
// identity the PoP holds; the same message as a Limiter sends it, split
// into payloads within the bound, is applied. Applied, a payload of up to
// gossip's 1 MiB held the Limiter's lock, and every decision with it,
// sixteen times as long as one of 64 KiB (a sender's bug or a hostile
// client on the subject). Mutation it catches: hear decoding and applying a payload of
// any length gossip.Decode takes.
func TestGossipHearRefusesOversized(t *testing.T) {
	rdb, _ := redistest.Client(t)
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	l, err := New(Config{PoP: "b", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2}, rdb, clock)
	require.NoError(t, err)
	l.mu.Lock()
	l.m.entry("k") // b holds k
	l.mu.Unlock()
	x := int64(w0 / testWindow)
	msg := gossip.Message{PoP: "a#1", SentAt: clock.Now(), WindowMillis: testWindow}
	for i := 0; len(msg.Entries)*12 < 2*gossipPayloadBytes; i++ {
		msg.Entries = append(msg.Entries, gossip.Entry{Key: fmt.Sprintf("other%d", i), Window: x, Count: 1})
	}
	msg.Entries = append(msg.Entries, gossip.Entry{Key: "k", Window: x, Count: 10}) // fills k's limit

	big, err := gossip.Encode(msg, gossip.MaxMessageBytes)
	require.NoError(t, err)
	require.Len(t, big, 1)
	require.Greater(t, len(big[0]), gossipPayloadBytes)
	l.hear(big[0])
	st := l.Stats()
	assert.Equal(t, uint64(1), st.GossipMalformed, "the oversized payload is counted malformed")
	assert.Zero(t, st.GossipDenies, "the oversized payload was applied")

	small, err := gossip.Encode(msg, gossipPayloadBytes)
	require.NoError(t, err)
	for _, p := range small {
		require.LessOrEqual(t, len(p), gossipPayloadBytes)
		l.hear(p)
	}
	st = l.Stats()
	assert.Equal(t, uint64(1), st.GossipMalformed, "a payload within the bound counted malformed")
	assert.Equal(t, uint64(1), st.GossipDenies, "the message within the bound denies k")
}
