package budget

import (
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLightTier: identities seen only through free credit are light
// records (no full entry, no Sync work) and are forgotten two windows
// after their last request without a sweep; the first request the free
// credit cannot cover promotes the record to a full entry carrying its
// unreported free ops, used slots and own counts. Caught mutations: a
// promotion that drops the free ops (the item's Ops miss window w), or
// forgets the used slot (the item gives up slot w too: a second claim at
// Redis frees another PoP's reserved credit), or loses the own counts
// (the fallback admits one unit too many); a free request that creates a
// full entry (the full-entry count is not 0); a tier that keeps records
// past two windows (Len is not 0).
func TestLightTier(t *testing.T) {
	m := newTestMachine(t, func(c *Config) { c.Groups = 1 })
	const ids = 1000
	for i := range ids {
		d, c := m.Request(w0+int64(i), fmt.Sprintf("id%d", i), 1)
		require.Nil(t, c, "free credit asks nothing")
		require.Equal(t, Decision{Allowed: true, Source: SrcFree}, d)
	}
	assert.Equal(t, ids, m.Len(), "every identity is in the view")
	assert.Empty(t, m.view, "all of them light: no full entry")
	assert.Empty(t, m.Tick(w0+testWindow/2), "light records send nothing")
	assert.Zero(t, m.Stats().Visits, "and cost a Tick no visit")

	// id1's next window: still free; then a second request promotes it.
	d, c := m.Request(w0+testWindow+500, "id1", 1)
	require.Nil(t, c)
	require.Equal(t, SrcFree, d.Source, "a new window's free credit")
	_, c = m.Request(w0+testWindow+600, "id1", 1)
	require.NotNil(t, c, "the second request of the window asks Redis")
	e := m.view["id1"]
	require.NotNil(t, e, "promoted to a full entry")
	assert.Equal(t, uint64(1), m.Stats().Promoted)
	assert.Equal(t, ids-1, m.lightLen(), "the other records stay light")
	assert.ElementsMatch(t, []Op{{X: 1000, GW: GWFree, U: 1}, {X: 1001, GW: GWFree, U: 1}}, c.Items[0].Ops,
		"both free units, unreported, move to the entry and go with its decision Call")
	assert.Equal(t, core.WindowState{Index: 1001, Cur: 1, Prev: 1}, e.own, "own counts for the fallback")
	assert.Empty(t, c.Items[0].Claims, "known here since window 1000 and not called contested, id1 keeps its next windows' slots; the used slots 1000 and 1001 are not claimed apart")
	m.Complete(w0+testWindow+650, c, &Result{Now: w0 + testWindow + 650, Window: 1001, Items: []ItemResult{{Allowed: 1, CW: 3, Headroom: 1}}}, nil)
	calls := m.Tick(w0 + testWindow + 700)
	require.Len(t, calls, 1)
	require.Len(t, calls[0].Items, 1, "only the promoted, contested identity is sent")
	it := calls[0].Items[0]
	assert.Empty(t, it.Ops, "its free units were reported with the decision Call")
	assert.Equal(t, []int64{1002, 1003}, it.Claims, "called contested, it gives up the next two windows' slots; the used slots 1000 and 1001 are not claimed again")

	// Two windows after their last request the records are gone.
	m.Tick(w0 + 2*testWindow + 100)
	assert.Equal(t, 1, m.Len(), "window 1002: the records of 1000 are dropped whole, the full entry stays")
	d, c = m.Request(w0+2*testWindow+200, "id5", 1)
	assert.Nil(t, c)
	assert.Equal(t, SrcFree, d.Source, "a forgotten identity starts afresh with its free credit")
}

// TestLightPromotesFastIdentity: two free requests less than a window apart
// (a rate above the free credit's one request a window) promote the
// record, so the next Sync asks a grant ahead of its requests; a second
// free request a full window or more after the first keeps it light.
// Caught mutations: no promotion on a fast rate (the Sync asks nothing);
// the record's time read against the wrong window (born a window off).
func TestLightPromotesFastIdentity(t *testing.T) {
	m := newTestMachine(t, func(c *Config) { c.Groups = 1 })
	m.Request(w0+100, "slow", 1)
	m.Request(w0+testWindow-200, "fast", 1)
	m.Request(w0+testWindow+100, "fast", 1) // 300 ms later, next window
	m.Request(w0+testWindow+150, "slow", 1) // more than a window later
	require.Contains(t, m.view, "fast", "a fast identity is a full entry")
	assert.NotContains(t, m.view, "slow", "a slow one stays light")
	assert.Equal(t, int64(w0+testWindow-200), m.view["fast"].born, "seen here since its first request, the record's time in the window before")
	assert.Equal(t, int64(w0+testWindow-200), m.view["fast"].lastPlan, "its demand counts from that request")
	calls := m.Tick(w0 + testWindow + 200)
	require.Len(t, calls, 1, "the fast identity's Sync")
	require.Len(t, calls[0].Items, 1)
	assert.Equal(t, "fast", calls[0].Items[0].Key)
	assert.Positive(t, calls[0].Items[0].Want, "a grant asked before its next request")
}

// TestLightClockBehind: a request stamped in a window before the tier's
// (a clock that stepped back) is decided on a full entry holding the
// record's used slot, as a full entry from the start would decide it:
// free credit is a watermark (the slots up to the last one used are
// spent), so it asks Redis. Caught mutation: a late request decided in the
// tier, which would admit it free a second time in window 1001's record.
func TestLightClockBehind(t *testing.T) {
	m := newTestMachine(t, nil)
	m.Request(w0+testWindow+10, "b", 1) // free credit of 1001, light
	require.Empty(t, m.view)
	d, c := m.Request(w0+testWindow-10, "b", 1)
	assert.NotNil(t, c, "behind the watermark of used slots: Redis decides")
	assert.NotEqual(t, SrcFree, d.Source)
	require.Contains(t, m.view, "b", "decided on a full entry")
	assert.Equal(t, int64(1001), m.view["b"].usedFree, "the record's used slot moved to the entry")
}

// TestLightRecordBounds: a light record holds its units in 16 bits and its
// time as 32 bits of milliseconds into its window, so a free request of
// more than 65,535 units, and any request when the window is 2³² ms or
// longer, is decided on a full entry instead, admitted the same. Caught
// mutations: a bound one unit off either way (65,535 units not light, or
// 65,536 light with its units truncated to 0), no bound on the window (a
// record whose time wraps).
func TestLightRecordBounds(t *testing.T) {
	m := newTestMachine(t, func(c *Config) {
		c.Limit = core.PerWindow(10_000_000, testWindow*time.Millisecond)
		c.FreeCredit = 100_000
	})
	d, c := m.Request(w0+1, "fits", 65_535)
	require.Nil(t, c)
	assert.Equal(t, SrcFree, d.Source)
	assert.NotContains(t, m.view, "fits", "65,535 units: a light record")
	assert.Equal(t, 1, m.lightLen())
	d, c = m.Request(w0+2, "big", 65_536)
	require.Nil(t, c, "free credit covers it")
	assert.Equal(t, SrcFree, d.Source, "admitted the same")
	require.Contains(t, m.view, "big", "65,536 units: a full entry")
	assert.Equal(t, core.WindowState{Index: w0 / testWindow, Cur: 65_536}, m.view["big"].own, "its units whole")

	long := newTestMachine(t, func(c *Config) { c.Limit = core.PerWindow(100, (1<<32+1)*time.Millisecond) })
	d, c = long.Request(w0, "a", 1)
	require.Nil(t, c)
	assert.Equal(t, SrcFree, d.Source)
	assert.Contains(t, long.view, "a", "a window of 2³² ms or more: no light record")
	assert.Zero(t, long.lightLen())
}
