package netmodel

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stretchr/testify/assert"
)

func TestParseFaultFlags(t *testing.T) {
	s, err := ParseSpan("20s+5s")
	require.False(t, err != nil || s != (Span{20 * time.Second, 5 * time.Second}) || !s.Has(24*time.Second) || s.Has(25*time.Second), "ParseSpan(20s+5s) = %+v, %v", s, err)
	s, err = ParseSpan("")
	require.False(t, err != nil || s.Has(0), "empty span: %+v, %v", s, err)
	for _, bad := range []string{"20s", "x+5s", "-1s+5s", "1s+0s", "1s+-2s", "1s+y"} {
		_, err := ParseSpan(bad)
		assert.Error(t, err, "ParseSpan(%q) accepted", bad)
	}
	p, err := ParsePoPSpan("3@1s+2s")
	require.False(t, err != nil || p.PoP != 3 || p.Start != time.Second, "ParsePoPSpan: %+v, %v", p, err)
	for _, bad := range []string{"1s+2s", "-1@1s+2s", "a@1s+2s", "3@1s"} {
		_, err := ParsePoPSpan(bad)
		assert.Error(t, err, "ParsePoPSpan(%q) accepted", bad)
	}
	c, ok, err := ParseCrash("2@30s")
	require.False(t, err != nil || !ok || c != (Crash{2, 30 * time.Second}), "ParseCrash: %+v %v %v", c, ok, err)
	_, ok, err = ParseCrash("")
	require.False(t, ok || err != nil, "empty crash")
	for _, bad := range []string{"30s", "2@", "2@-1s", "x@1s"} {
		_, _, err := ParseCrash(bad)
		assert.Error(t, err, "ParseCrash(%q) accepted", bad)
	}
	for _, f := range []Faults{{Partition: PoPSpan{8, Span{0, time.Second}}}, {Crashes: []Crash{{9, 0}}},
		{GossipLoss: 1.5}, {GossipDup: -0.1}} {
		err := f.Validate(8)
		assert.Error(t, err, "Validate(%+v) accepted for 8 PoPs", f)
	}
	require.False(t, (Faults{}).Any() || !(Faults{GossipDup: 0.1}).Any(), "Any")
}

func TestLinksDrawDeterministically(t *testing.T) {
	m, err := WorldWide(4, 10*time.Millisecond, 100*time.Millisecond)
	require.NoError(t, err)
	d := NewLinks(m, 0, 1).Up(3)
	require.EqualValues(t, 50*time.Millisecond, d, "no jitter: up %v, want half the RTT", d)
	a, b := NewLinks(m, 0.5, 7), NewLinks(m, 0.5, 7)
	reordered := false
	var last time.Duration
	for i := range 1000 {
		x, y := a.Peer(0, 2), b.Peer(0, 2)
		require.Equal(t, x, y, "draw %d: two links of one seed", i)
		require.GreaterOrEqual(t, x, m.OneWay[0][2], "draw %d: at least the base delay", i)
		// two messages sent 1 ms apart arrive in the other order
		reordered = reordered || (i > 0 && x+time.Millisecond < last)
		last = x
	}
	require.True(t, reordered, "jitter 0.5 never reordered two messages 1 ms apart")
}
