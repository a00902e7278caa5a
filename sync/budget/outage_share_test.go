package budget

import (
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOutageShareAcrossWindows: a PoP whose last word from Redis about an
// identity is a Sync's reply at the start of a window, before it admitted
// anything there, keeps its share of the identity while Redis is down:
// its units of the window before, weighted by the sliding rule as it
// stood when that Sync went out, against what Redis had accounted for
// (here 6 of 26: C 8 + 14 of the window before, and Max less the headroom
// 26). Caught mutations: the share read in Redis' last window alone (0
// units: every request denied for the rest of the outage), the windows
// weighted at the request's time rather than at the last word (half-way
// through the window the share has halved to about 4.6 units, which the
// 6 units this PoP counts by then exceed: nothing more admitted).
func TestOutageShareAcrossWindows(t *testing.T) {
	const limit, pops = 40, 4
	m := newTestMachine(t, func(c *Config) { c.Limit = core.PerWindow(limit, testWindow*time.Millisecond); c.PoPs = pops })
	x := int64(w0 / testWindow)
	// window x: one free unit, then five units Redis decides, this PoP's
	// six of the window's 14 at Redis
	for i := int64(0); i < 6; i++ {
		d, c := m.Request(w0+100*i, "s", 1)
		if c != nil {
			d = m.Complete(w0+100*i+2, c, &Result{Now: w0 + 100*i + 1, Window: x, Items: []ItemResult{{Allowed: 1, CW: 8 + i, Headroom: 30 - i}}}, nil)
		}
		require.True(t, d.Allowed, "unit %d of window x", i)
	}
	// window x+1 begins: the Sync's top-up is answered with the other
	// PoPs' 8 units there and no grant
	start := int64(w0 + testWindow)
	sent := start + 5
	items := 0
	for _, c := range m.Tick(sent) {
		res := &Result{Now: sent + 1, Window: x + 1, Items: make([]ItemResult, len(c.Items))}
		for i, it := range c.Items {
			require.Equal(t, "s", it.Key)
			res.Items[i] = ItemResult{Allowed: -1, CW: 8, CPrev: 14, Headroom: 14}
			items++
		}
		m.Finish(c, res, nil)
	}
	require.Equal(t, 1, items, "the Sync asks s a top-up")
	e := m.view["s"]
	require.Zero(t, m.reported(e), "nothing of this PoP's counted in Redis' last window")

	// the share: 6 units weighted k (at the Sync's sending) of 26
	k := 1 - float64(sent-(x+1)*testWindow)/testWindow
	units := limit * 6 * k / 26
	// early in x+1 this PoP's own estimate is 6·k' (k' at the request)
	early := start + 100
	kEarly := 1 - float64(early-start)/testWindow
	want := int(units - 6*kEarly) // whole units that fit
	require.Positive(t, want)
	assert.Equal(t, want, admittedWhileDown(m, "s", early, 20), "early in the window: the share less this PoP's sliding count")
	half := start + testWindow/2
	wantHalf := int(units - 6*0.5 - float64(want))
	require.Positive(t, wantHalf)
	assert.Equal(t, wantHalf, admittedWhileDown(m, "s", half, 20), "half-way: the share as at the last word, this PoP's own count decayed")
}
