package budget

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// overLimit has m absorb a reply for key at now whose count C (cw in
// window now's, cprev in the one before) is what Redis says.
func overLimit(m *Machine, key string, now, cw, cprev int64) {
	x := m.window(now)
	m.absorb(m.entry(key), now, &Result{Now: now, Window: x}, ItemResult{CW: cw, CPrev: cprev})
}

// TestGossipTellsDenials: a reply whose C alone fills the limit is named
// in the next Gossip (once; a calm one never), and a PoP holding the
// identity then denies it from its deny cache without a Call, while its
// own messages, another window length's and unknown identities change
// nothing. Mutations it catches: tell not called in absorb (no message);
// Hear creating entries for identities it does not hold (Len grows).
func TestGossipTellsDenials(t *testing.T) {
	a := newTestMachine(t, nil) // limit 10
	b := newTestMachine(t, func(c *Config) { c.PoP, c.Incarnation = "q", 2 })
	now := int64(w0 + testWindow/2)

	overLimit(a, "calm", now, 3, 0)
	_, ok := a.Gossip(now)
	assert.False(t, ok, "an identity under its limit is not gossiped")

	overLimit(a, "hot", now, 10, 4)
	overLimit(a, "hot", now+1, 10, 4) // told once per message
	overLimit(a, "elsewhere", now+1, 11, 0)
	msg, ok := a.Gossip(now + 2)
	require.True(t, ok, "an identity whose C fills the limit is gossiped")
	assert.Equal(t, a.ID(), msg.PoP, "the sender is named by PoP and incarnation")
	require.Len(t, msg.Entries, 3, "one entry per identity and window with a count: %+v", msg.Entries)
	assert.Equal(t, int64(10), msg.Entries[0].Count, "window x's C")
	assert.Equal(t, msg.Entries[0].Window-1, msg.Entries[1].Window, "then window x−1's")
	_, ok = a.Gossip(now + 3)
	assert.False(t, ok, "Gossip empties its queue")

	b.entry("hot")
	before := b.Len()
	other := msg
	other.WindowMillis++
	b.Hear(now+5, other)
	a.Hear(now+5, msg)
	assert.Zero(t, a.Stats().GossipDenies+b.Stats().GossipDenies, "its own message and another window length's change nothing")
	b.Hear(now+5, msg)
	b.Hear(now+6, msg) // a duplicate extends nothing
	assert.Equal(t, uint64(1), b.Stats().GossipDenies, "the heard count denies the identity once")
	assert.Equal(t, before, b.Len(), "hearing creates no entry")
	d, c := b.Request(now+7, "hot", 1)
	assert.Nil(t, c, "the heard denial needs no Call")
	assert.Equal(t, Decision{Allowed: false, Source: SrcDenyCache}, d, "denied from the deny cache")
	_, c = b.Request(now+7, "calm", 1)
	assert.Nil(t, c, "an identity not heard of is decided as before (free credit)")
}
