package truth

import (
	"math"
	"slices"
)

// Tally counts decisions against the ground truth.
type Tally struct {
	Decisions   int64
	Allowed     int64
	Denied      int64
	FalseAllows int64 // allowed where the exact log said deny
	FalseDenies int64 // denied where the exact log said allow
	Units       int64 // units admitted
}

// Count adds one decision on n units to t: allowed is the decision,
// shouldAllow the exact log's verdict (what Judge.Observe returns).
func (t *Tally) Count(allowed, shouldAllow bool, n int64) { t.count(allowed, shouldAllow, n) }

func (t *Tally) count(allowed, right bool, n int64) {
	t.Decisions++
	switch {
	case allowed:
		t.Allowed++
		t.Units += n
		if !right {
			t.FalseAllows++
		}
	default:
		t.Denied++
		if right {
			t.FalseDenies++
		}
	}
}

// ErrorPct is (false allows + false denies) / decisions × 100; 0 with no
// decisions.
func (t Tally) ErrorPct() float64 {
	if t.Decisions == 0 {
		return 0
	}
	return 100 * float64(t.FalseAllows+t.FalseDenies) / float64(t.Decisions)
}

// Result is the Judge's verdict on a whole run.
type Result struct {
	Tally
	MaxOveradmission float64 // worst identity's peak units per window ÷ limit
	P99Overadmission float64 // 99th percentile (nearest rank) over identities seen
}

// Result summarises everything observed so far. Over-admission ranks every
// identity that made at least one decision, including those never admitted.
func (j *Judge[K]) Result() Result {
	peaks := make([]float64, 0, len(j.ids))
	for _, h := range j.ids {
		peaks = append(peaks, float64(h.peak)/float64(j.limit))
	}
	return Result{Tally: j.tally}.withPeaks(peaks)
}

// withPeaks returns r with its over-admission figures taken from peaks,
// one per identity in any order (sorted in place).
func (r Result) withPeaks(peaks []float64) Result {
	slices.Sort(peaks)
	r.MaxOveradmission, r.P99Overadmission = Percentile(peaks, 100), Percentile(peaks, 99)
	return r
}

// Percentile is the nearest-rank p-th percentile of sorted; 0 when empty.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}
