package truth

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decision is one observation of a test sequence.
type decision struct {
	id      int32
	t, n    int64
	allowed bool
}

// randomDecisions is a time-ordered sequence over ids identities, many at
// equal times, at up to a few times a limit of 5 per 100 ms.
func randomDecisions(seed uint64, ids, count int) []decision {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]decision, count)
	t := int64(0)
	for i := range out {
		t += rng.Int64N(6)
		out[i] = decision{id: int32(rng.IntN(ids)), t: t, n: 1 + rng.Int64N(3), allowed: rng.IntN(3) > 0}
	}
	return out
}

// naive judges ds by summing, for each decision, every unit its identity
// was admitted in (t − window, t]: the exact log without any bookkeeping.
// It returns the verdicts and each identity's peak (-1: no decision).
func naive(ds []decision, limit, window int64, ids int) (right []bool, peak []int64) {
	peak = make([]int64, ids)
	for i := range peak {
		peak[i] = -1
	}
	held := func(i int) int64 { // units of ds[i].id admitted in (t − window, t] before i
		var u int64
		for _, p := range ds[:i] {
			if p.id == ds[i].id && p.allowed && p.t > ds[i].t-window {
				u += p.n
			}
		}
		return u
	}
	for i, d := range ds {
		u := held(i)
		right = append(right, u < limit-d.n+1)
		peak[d.id] = max(peak[d.id], 0)
		if d.allowed {
			peak[d.id] = max(peak[d.id], u+d.n)
		}
	}
	return right, peak
}

// naiveResult is the Result naive's verdicts and peaks give for the
// identities keep selects.
func naiveResult(ds []decision, right []bool, peak []int64, limit int64, keep func(int32) bool) Result {
	var r Result
	for i, d := range ds {
		if keep(d.id) {
			r.count(d.allowed, right[i], d.n)
		}
	}
	var ps []float64
	for id, p := range peak {
		if p >= 0 && keep(int32(id)) {
			ps = append(ps, float64(p)/float64(limit))
		}
	}
	return r.withPeaks(ps)
}

// TestDenseAndJudgeAreTheExactLog checks Dense and Judge against naive on
// random sequences: every verdict, the tally and the over-admission, and
// Dense's ResultsBy against naive restricted to each group.
func TestDenseAndJudgeAreTheExactLog(t *testing.T) {
	const limit, ids = 5, 40
	window := 100 * time.Millisecond
	for seed := range uint64(20) {
		ds := randomDecisions(seed, ids, 3000)
		right, peak := naive(ds, limit, window.Milliseconds(), ids)
		d := NewDense(limit, window, ids/2) // grows for the rest
		j := New[int32](limit, window)
		for i, x := range ds {
			require.Equal(t, right[i], d.Observe(x.id, x.t, x.n, x.allowed), "seed %d, decision %d: Dense against the exact log", seed, i)
			require.Equal(t, right[i], j.Observe(x.id, x.t, x.n, x.allowed), "seed %d, decision %d: Judge against the exact log", seed, i)
		}
		all := naiveResult(ds, right, peak, limit, func(int32) bool { return true })
		assert.Equal(t, all, d.Result(), "seed %d: Dense's result against the naive one", seed)
		assert.Equal(t, all, j.Result(), "seed %d: Judge's result against the naive one", seed)
		group := func(id int32) int { return int(id%4) - 1 } // group -1 is none
		tallies := make([]Tally, 3)
		for i, x := range ds {
			if g := group(x.id); g >= 0 {
				tallies[g].Count(x.allowed, right[i], x.n)
			}
		}
		got := d.ResultsBy(group, tallies)
		for g := range tallies {
			want := naiveResult(ds, right, peak, limit, func(id int32) bool { return group(id) == g })
			assert.Equal(t, want, got[g], "seed %d, group %d: ResultsBy against the naive result of the group", seed, g)
		}
	}
}

// TestDenseRanksIdentitiesNeverAdmitted: an identity whose every request
// was denied ranks at 0, as in Judge; one never seen does not rank.
func TestDenseRanksIdentitiesNeverAdmitted(t *testing.T) {
	d := NewDense(2, time.Second, 10)
	d.Observe(3, 0, 1, true)
	d.Observe(3, 1, 1, true)
	for id := range int32(100) {
		d.Observe(id+4, 2, 1, false)
	}
	r := d.Result()
	assert.Equal(t, 1.0, r.MaxOveradmission, "max, want 1 (100 identities at 0, one at 1)")
	assert.Equal(t, 0.0, r.P99Overadmission, "p99, want 0 (100 identities at 0, one at 1)")
	assert.Len(t, d.ids, 104, "identities the Dense grew to")
}
