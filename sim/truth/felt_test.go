package truth

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// naiveAdmit is the ideal limiter by brute force: each request, in order,
// is allowed when the units its identity was allowed in (t − window, t]
// plus its own are at most limit.
func naiveAdmit(ds []decision, limit, window int64) []bool {
	out := make([]bool, len(ds))
	for i, d := range ds {
		var held int64
		for k, p := range ds[:i] {
			if out[k] && p.id == d.id && p.t > d.t-window {
				held += p.n
			}
		}
		out[i] = held+d.n <= limit
	}
	return out
}

// TestAdmitIsTheExactLog checks the reference (Dense.Admit) against a
// brute-force exact log on random traces, decision by decision.
func TestAdmitIsTheExactLog(t *testing.T) {
	const limit, ids = 5, 30
	window := 100 * time.Millisecond
	for seed := range uint64(20) {
		ds := randomDecisions(seed, ids, 2000)
		want := naiveAdmit(ds, limit, window.Milliseconds())
		d := NewDense(limit, window, 1) // grows
		denied := 0
		for i, x := range ds {
			got := d.Admit(x.id, x.t, x.n)
			require.Equalf(t, want[i], got, "seed %d, decision %d (identity %d, %d units at %d ms): reference against the brute-force log", seed, i, x.id, x.n, x.t)
			if !got {
				denied++
			}
		}
		r := d.Result()
		assert.Zerof(t, r.FalseAllows+r.FalseDenies, "seed %d: the reference judged against its own log errs nowhere", seed)
		assert.LessOrEqualf(t, r.MaxOveradmission, 1.0, "seed %d: the reference never holds more than the limit", seed)
		assert.Positivef(t, denied, "seed %d: the random trace should go over the limit somewhere (else the test proves little)", seed)
	}
}

// naiveFelt computes every FeltResult figure for the identities keep
// selects by the definitions, from scratch: demand per window-long
// interval, units per fixed window, the exact log's sums.
func naiveFelt(ds []decision, allowed, ref []bool, limit, window int64, keep func(int32) bool) FeltResult {
	var r FeltResult
	type idWin struct {
		id  int32
		win int64
	}
	got, want := map[idWin]int64{}, map[idWin]int64{}
	units, refUnits, denied := map[int32]int64{}, map[int32]int64{}, map[int32]int64{}
	contested := map[int32]bool{}
	for i, d := range ds {
		if !keep(d.id) {
			continue
		}
		w := idWin{d.id, d.t / window}
		// demand of the window-long interval ending at this request
		var demand int64
		for _, p := range ds[:i+1] {
			if p.id == d.id && p.t > d.t-window {
				demand += p.n
			}
		}
		if demand > limit {
			contested[d.id] = true
		}
		if _, ok := units[d.id]; !ok {
			units[d.id], refUnits[d.id], denied[d.id] = 0, 0, 0
		}
		if allowed[i] {
			got[w] += d.n
			units[d.id] += d.n
			var held int64 // units the limiter admitted in (t − window, t] before
			for k, p := range ds[:i] {
				if allowed[k] && p.id == d.id && p.t > d.t-window {
					held += p.n
				}
			}
			r.BeyondUnits += min(d.n, max(0, held+d.n-limit))
		} else {
			denied[d.id] += d.n
		}
		if ref[i] {
			want[w] += d.n
			refUnits[d.id] += d.n
		}
	}
	var rates []float64
	var contestedRef int64
	for id := range units {
		r.Units += units[id]
		r.ReferenceUnits += refUnits[id]
		if !contested[id] {
			if denied[id] > 0 {
				r.WronglyLimited++
				r.WronglyLimitedUnits += denied[id]
			}
			continue
		}
		r.Contested++
		contestedRef += refUnits[id]
		rates = append(rates, 100*math.Abs(float64(units[id]-refUnits[id]))/float64(refUnits[id]))
	}
	for w, n := range want {
		if contested[w.id] {
			r.UnderAdmitted += max(0, n-got[w])
		}
	}
	r.QuotaServedPct = 100
	if r.ReferenceUnits > 0 {
		r.QuotaServedPct = 100 * float64(r.Units) / float64(r.ReferenceUnits)
	}
	if contestedRef > 0 {
		r.UnderAdmissionPct = 100 * float64(r.UnderAdmitted) / float64(contestedRef)
	}
	if len(rates) > 0 {
		slices.Sort(rates)
		var sum float64
		for _, e := range rates {
			sum += e
		}
		r.RateErrorMeanPct, r.RateErrorP99Pct = sum/float64(len(rates)), Percentile(rates, 99)
	}
	return r
}

// assertFelt compares two FeltResults field by field, floats to 1e-9.
func assertFelt(t *testing.T, want, got FeltResult, what string) {
	t.Helper()
	assert.Equalf(t, want.Units, got.Units, "%s: units admitted", what)
	assert.Equalf(t, want.ReferenceUnits, got.ReferenceUnits, "%s: units the reference admitted", what)
	assert.InDeltaf(t, want.QuotaServedPct, got.QuotaServedPct, 1e-9, "%s: quota served %%", what)
	assert.Equalf(t, want.Contested, got.Contested, "%s: contested identities", what)
	assert.Equalf(t, want.UnderAdmitted, got.UnderAdmitted, "%s: units under-admitted window by window", what)
	assert.InDeltaf(t, want.UnderAdmissionPct, got.UnderAdmissionPct, 1e-9, "%s: under-admission %%", what)
	assert.Equalf(t, want.BeyondUnits, got.BeyondUnits, "%s: units beyond the limit", what)
	assert.Equalf(t, want.WronglyLimited, got.WronglyLimited, "%s: wrongly limited identities", what)
	assert.Equalf(t, want.WronglyLimitedUnits, got.WronglyLimitedUnits, "%s: units denied to wrongly limited identities", what)
	assert.InDeltaf(t, want.RateErrorMeanPct, got.RateErrorMeanPct, 1e-9, "%s: mean rate error %%", what)
	assert.InDeltaf(t, want.RateErrorP99Pct, got.RateErrorP99Pct, 1e-9, "%s: p99 rate error %%", what)
}

// TestFeltAgainstNaive checks every figure of Felt, whole and by group,
// against naiveFelt on random traces and random limiter decisions.
func TestFeltAgainstNaive(t *testing.T) {
	const limit, ids = 5, 24
	window := int64(100)
	for seed := range uint64(12) {
		ds := randomDecisions(seed, ids, 1200)
		ref := naiveAdmit(ds, limit, window)
		allowed := make([]bool, len(ds))
		for i, x := range ds {
			allowed[i] = x.allowed
		}
		d, f := NewDense(limit, time.Duration(window)*time.Millisecond, ids), NewFelt(time.Duration(window)*time.Millisecond, 3)
		for i, x := range ds {
			_, beyond := d.ObserveBeyond(x.id, x.t, x.n, allowed[i])
			f.Observe(x.id, x.t, x.n, allowed[i], ref[i], beyond)
		}
		all := naiveFelt(ds, allowed, ref, limit, window, func(int32) bool { return true })
		require.Positivef(t, all.Contested, "seed %d: some identity should be contested", seed)
		assertFelt(t, all, f.Result(), fmt.Sprintf("seed %d, whole run", seed))
		group := func(id int32) int { return int(id%3) - 1 }
		byGroup := f.ResultsBy(group, 2)
		for g := range 2 {
			want := naiveFelt(ds, allowed, ref, limit, window, func(id int32) bool { return group(id) == g })
			assertFelt(t, want, byGroup[g], fmt.Sprintf("seed %d, group %d", seed, g))
		}
	}
}

// steady is one identity sending one unit every every ms from 0 to end
// (exclusive).
func steady(id int32, every, end int64) []decision {
	var out []decision
	for t := int64(0); t < end; t += every {
		out = append(out, decision{id: id, t: t, n: 1})
	}
	return out
}

// feel runs ds through a Dense and a Felt, the limiter allowing what
// allow says, the reference deciding by Admit.
func feel(ds []decision, limit int64, window time.Duration, allow func(i int) bool) FeltResult {
	d, ref, f := NewDense(limit, window, 1), NewDense(limit, window, 1), NewFelt(window, 1)
	for i, x := range ds {
		a := allow(i)
		_, beyond := d.ObserveBeyond(x.id, x.t, x.n, a)
		f.Observe(x.id, x.t, x.n, a, ref.Admit(x.id, x.t, x.n), beyond)
	}
	return f.Result()
}

// TestFeltHandBuilt checks the figures on traces whose answers are known.
func TestFeltHandBuilt(t *testing.T) {
	const limit = 10
	window := time.Second
	// 0.9× the limit: one request every 112 ms, at most 9 in any second,
	// for 5 windows.
	calm := steady(0, 112, 5000)
	r := feel(calm, limit, window, func(int) bool { return true })
	assert.Zero(t, r.Contested, "a client at 0.9× its limit is never contested")
	assert.Zero(t, r.WronglyLimited, "a client at 0.9× its limit never denied: 0 wrongly limited")
	assert.InDelta(t, 100.0, r.QuotaServedPct, 1e-9, "admitting everything serves the reference's quota")

	r = feel(calm, limit, window, func(i int) bool { return i != 17 })
	assert.EqualValues(t, 1, r.WronglyLimited, "a limiter that denies one request of a client at 0.9× its limit: 1 wrongly limited")
	assert.EqualValues(t, 1, r.WronglyLimitedUnits, "that identity was denied 1 unit")
	assert.Zero(t, r.UnderAdmitted, "under-admission counts contested identities only")

	// 2× the limit: 20 requests a window, one every 50 ms, for 4 windows
	// (4,000 ms): the reference admits the first 10 of each window.
	heavy := steady(1, 50, 4000)
	r = feel(heavy, limit, window, func(i int) bool { return i%20 < 10 })
	assert.EqualValues(t, 1, r.Contested, "a client at 2× its limit is contested")
	assert.EqualValues(t, 40, r.ReferenceUnits, "the reference admits 10 a window over 4 windows")
	assert.Zero(t, r.UnderAdmitted, "a limiter admitting what the reference does under-admits nothing")
	assert.Zero(t, r.BeyondUnits, "nor admits beyond the limit")

	r = feel(heavy, limit, window, func(i int) bool { return i%20 < 5 })
	assert.EqualValues(t, 20, r.UnderAdmitted, "admitting 5 of the reference's 10 in each of 4 windows under-admits 20 units")
	assert.InDelta(t, 50.0, r.UnderAdmissionPct, 1e-9, "half of the reference's units")
	assert.InDelta(t, 50.0, r.QuotaServedPct, 1e-9, "quota served 20 of 40")
	assert.InDelta(t, 50.0, r.RateErrorMeanPct, 1e-9, "rate error |20 − 40| ÷ 40")

	// Admitting 15 in window 0 and 5 in window 1 has the reference's total
	// over those two windows, yet under-admits 5 window by window; 5 of
	// window 0's units went past the limit, and all 5 of window 1's (window
	// 0's units from 250 ms on were still inside the sliding window).
	r = feel(heavy[:40], limit, window, func(i int) bool { return i < 15 || (i >= 20 && i < 25) })
	assert.EqualValues(t, 5, r.UnderAdmitted, "a surplus in one window does not make up a shortfall in another")
	assert.EqualValues(t, 10, r.BeyondUnits, "units 11 to 15 of window 0 and the 5 of window 1 (each met 14 held) are beyond the limit")
	assert.InDelta(t, 100.0, r.QuotaServedPct, 1e-9, "20 admitted of the reference's 20")
	assert.Zero(t, r.RateErrorMeanPct, "same total as the reference: no rate error")
}
