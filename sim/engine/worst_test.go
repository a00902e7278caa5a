package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorstIdentities: Env.Worst = 3 lists three identities, worst first;
// the first one's peak over the limit is the run's worst over-admission
// (the exact log's measure, judged apart by the ground truth); each
// identity's seconds are in order, and their units and the reference's
// admissions add up to the identity's totals in the trace and in the
// reference, its admissions to at least its peak. Env.Worst = 0 lists
// none.
func TestWorstIdentities(t *testing.T) {
	e := testEnv(t, "spread-attack") // local mode over-admits spread attackers: peaks well apart from 0
	e.Worst = 3
	r, err := Run(context.Background(), e, "local")
	require.NoError(t, err)
	require.Len(t, r.Worst, 3, "Env.Worst = 3")
	assert.InDelta(t, r.MaxOveradmission, float64(r.Worst[0].Peak)/float64(e.Limit.Max), 0.005,
		"the worst identity's peak %d over the limit %d against the run's worst over-admission %.2f", r.Worst[0].Peak, e.Limit.Max, r.MaxOveradmission)
	units, refUnits := map[int32]int64{}, map[int32]int64{}
	ref := e.reference()
	for i, q := range e.Trace.Requests {
		units[q.ID] += int64(q.N)
		if ref[i] {
			refUnits[q.ID] += int64(q.N)
		}
	}
	for k, wi := range r.Worst {
		if k > 0 {
			assert.GreaterOrEqual(t, r.Worst[k-1].Peak, wi.Peak, "worst first: %d then %d", r.Worst[k-1].Peak, wi.Peak)
		}
		assert.NotEmpty(t, wi.Class, "identity %d: a generated trace names its class", wi.ID)
		var u, adm, rf int64
		for j, s := range wi.Seconds {
			if j > 0 {
				assert.Greater(t, s.Second, wi.Seconds[j-1].Second, "identity %d: seconds in order", wi.ID)
			}
			assert.False(t, s.PoPs < 1 || s.PoPs > 4 || s.Admitted > s.Units || s.Reference > s.Units,
				"identity %d second %d: %+v, want 1..4 PoPs and admissions within the units asked", wi.ID, s.Second, s)
			u, adm, rf = u+s.Units, adm+s.Admitted, rf+s.Reference
		}
		assert.Equal(t, units[wi.ID], u, "identity %d: units over its seconds against the trace's", wi.ID)
		assert.Equal(t, refUnits[wi.ID], rf, "identity %d: the reference's admissions over its seconds", wi.ID)
		assert.GreaterOrEqual(t, adm, wi.Peak, "identity %d: admitted in all at least its peak", wi.ID)
	}
	e.Worst = 0
	r, err = Run(context.Background(), e, "local")
	require.NoError(t, err)
	assert.Nil(t, r.Worst, "Env.Worst = 0 lists no identity")
}
