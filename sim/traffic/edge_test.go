package traffic

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEdgeShape checks the edge scenario at the default size: about 5% of
// the requests from abusive identities spread over the PoPs, 15% from a
// warm head at 0.8–1.2× its limit near its home PoP, 80% from calm
// identities, each pinned to one PoP, far below the limit, their
// popularity falling with rank.
func TestEdgeShape(t *testing.T) {
	c := DefaultConfig()
	c.Scenario = "edge"
	tr, err := Generate(c)
	require.NoError(t, err)
	type who struct {
		n    int
		pops map[int16]bool
	}
	ids := map[int32]*who{}
	byClass := map[string]int{}
	for _, r := range tr.Requests {
		w := ids[r.ID]
		if w == nil {
			w = &who{pops: map[int16]bool{}}
			ids[r.ID] = w
		}
		w.n++
		w.pops[r.PoP] = true
		byClass[tr.Classes[tr.ClassOf[r.ID]]]++
	}
	total := float64(len(tr.Requests))
	require.InDelta(t, float64(c.Requests), total, float64(c.Requests)/100, "the request budget spent")
	assert.InDelta(t, 0.05, float64(byClass["attackers"])/total, 0.01, "abusive share of requests")
	assert.InDelta(t, 0.15, float64(byClass["warm"])/total, 0.01, "warm share of requests")
	assert.InDelta(t, 0.80, float64(byClass["calm"])/total, 0.01, "calm share of requests")
	perLimit := float64(c.Limit) * Windows // requests at exactly the limit over the trace
	prev, calm, warms, abusive := math.MaxInt, 0, 0, 0
	for id := int32(0); id < int32(c.Identities); id++ {
		w := ids[id]
		switch tr.Classes[tr.ClassOf[id]] {
		case "attackers":
			require.NotNil(t, w, "identity %d: abusive, sends", id)
			abusive++
			assert.GreaterOrEqual(t, len(w.pops), c.PoPs/2, "identity %d: abusive, spread over the PoPs", id)
			assert.GreaterOrEqual(t, float64(w.n), 2*perLimit*0.99, "identity %d: abusive, at least twice its limit", id)
		case "warm":
			require.NotNil(t, w, "identity %d: warm, sends", id)
			warms++
			assert.LessOrEqual(t, len(w.pops), 3, "identity %d: warm, at its home PoP and at most two neighbours", id)
			assert.InDelta(t, 1.0, float64(w.n)/perLimit, 0.201, "identity %d: warm, 0.8–1.2× its limit", id)
		case "calm":
			if w == nil {
				prev = 0
				continue
			}
			calm++
			assert.Len(t, w.pops, 1, "identity %d: calm, pinned to its home PoP", id)
			assert.LessOrEqual(t, float64(w.n), calmCap*perLimit, "identity %d: calm, far below its limit", id)
			assert.LessOrEqual(t, w.n, prev, "identity %d: calm popularity falls with rank", id)
			prev = w.n
		default:
			require.Failf(t, "unknown class", "identity %d: class %s, not one of the edge's", id, tr.Classes[tr.ClassOf[id]])
		}
	}
	assert.Positive(t, abusive, "some abusive identities")
	assert.Less(t, abusive, c.Identities/100, "abusive identities are a small share")
	assert.Positive(t, warms, "a warm head")
	assert.Greater(t, calm, c.Identities*9/10, "most identities are calm")
}

// TestZipfCountsFollowTheExponent: with no cap and no rounding to speak
// of, rank r gets r^-s of rank 1's requests.
func TestZipfCountsFollowTheExponent(t *testing.T) {
	for _, s := range []float64{1.0, 1.1} {
		counts := zipfCounts(1000, 10_000_000, math.MaxInt, s)
		for _, r := range []int{2, 10, 100, 1000} {
			want := math.Pow(float64(r), -s)
			assert.InDelta(t, want, float64(counts[r-1])/float64(counts[0]), want*0.01+1e-3,
				"exponent %g: rank %d against rank 1", s, r)
		}
	}
}
