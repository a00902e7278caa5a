package traffic

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unsorted is c's requests in the order the generator made them, before
// the sort by time, and the identities' classes.
func unsorted(t *testing.T, c Config) ([]Request, []uint8) {
	t.Helper()
	require.NoError(t, c.Validate(), "config %+v", c)
	g := newGen(c)
	for _, s := range recipes[c.Scenario] {
		g.fill(s.class, int(s.budget*float64(c.Requests)))
	}
	return g.reqs, g.classOf
}

// TestCrowdSpanChangesArrivalTimesOnly: at any -crowd-span the generator
// makes the same requests (identity, PoP, weight, in the same order) as at
// the default; only the crowd's times differ, each identity's burst
// arriving over at most the span (and most of it), in the same order.
func TestCrowdSpanChangesArrivalTimesOnly(t *testing.T) {
	base := small("flash-crowd")
	want, classOf := unsorted(t, base)
	tr, err := Generate(base)
	require.NoError(t, err)
	wantSorted := slices.Clone(want)
	sortRequests(wantSorted)
	require.Equal(t, wantSorted, tr.Requests, "Generate is the generator's requests sorted by time")
	for _, span := range []time.Duration{10 * time.Millisecond, 100 * time.Millisecond, DefaultCrowdSpan(base.Window), 2900 * time.Millisecond} {
		c := base
		c.CrowdSpan = span
		got, _ := unsorted(t, c)
		require.Len(t, got, len(want), "span %s: requests made", span)
		first, last := map[int32]time.Duration{}, map[int32]time.Duration{}
		moved := 0
		for i, w := range want {
			g := got[i]
			require.Equal(t, [3]int64{int64(w.ID), int64(w.PoP), int64(w.N)}, [3]int64{int64(g.ID), int64(g.PoP), int64(g.N)},
				"span %s, request %d: identity, PoP and weight as at the default span", span, i)
			if class(classOf[w.ID]) != crowd {
				require.Equal(t, w.At, g.At, "span %s, request %d: a request outside the crowd keeps its time", span, i)
				continue
			}
			if g.At != w.At {
				moved++
			}
			if f, ok := first[g.ID]; !ok || g.At < f {
				first[g.ID] = g.At
			}
			last[g.ID] = max(last[g.ID], g.At)
			for k := range i { // order kept within the identity
				if want[k].ID == w.ID && want[k].At < w.At {
					require.LessOrEqual(t, got[k].At, g.At, "span %s: identity %d's requests %d and %d change order", span, w.ID, k, i)
				}
			}
		}
		require.NotEmpty(t, first, "the scenario has crowd identities")
		if span != DefaultCrowdSpan(base.Window) {
			assert.Positive(t, moved, "span %s: the crowd's times change", span)
		} else {
			assert.Zero(t, moved, "the default span is the trace without -crowd-span")
		}
		for id, f := range first {
			spread := last[id] - f
			assert.Less(t, spread, span, "span %s: identity %d's burst arrives within the span", span, id)
			assert.Greater(t, spread, span/2, "span %s: identity %d's burst takes most of the span", span, id)
		}
	}
}

// TestCrowdSpanBounds: a span that is negative or runs past the trace's
// end is refused.
func TestCrowdSpanBounds(t *testing.T) {
	c := small("flash-crowd") // 6 s trace, 1 s window: at most 2.9 s
	for _, bad := range []time.Duration{-time.Millisecond, 2901 * time.Millisecond, time.Minute} {
		c.CrowdSpan = bad
		assert.ErrorContains(t, c.Validate(), "crowd-span", "span %s", bad)
	}
	c.CrowdSpan = 2900 * time.Millisecond
	assert.NoError(t, c.Validate(), "the longest span that ends within the trace")
}
