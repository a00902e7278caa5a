package truth

import (
	"slices"
	"time"
)

// Felt compares, identity by identity, what a limiter admitted with what
// the reference (Dense.Admit: the exact log deciding every request at its
// own instant) admitted on the same trace: what the identities' owners
// feel. Feed it every request in the order Dense is fed. The zero value is
// not usable; see NewFelt. A Felt is not safe for concurrent use.
type Felt struct {
	window int64
	ids    []felt
}

// felt is one identity's comparison: the fixed window (index) its last
// request fell in and the units the limiter (got) and the reference (ref)
// admitted in it, and its totals over the trace.
type felt struct {
	win      int64
	got, ref int64
	units    int64 // admitted by the limiter
	refUnits int64 // admitted by the reference
	under    int64 // Σ over past windows of max(0, ref − got)
	denied   int64 // units the limiter denied
	beyond   int64 // units the limiter admitted past the limit (Dense.ObserveBeyond)
	// contested: the reference denied the identity at least once, so its
	// demand passed the limit in some window-long interval.
	contested bool
	seen      bool
}

// FeltResult is what a group of identities felt of a limiter against the
// reference. Zero with no request.
type FeltResult struct {
	Units          int64 // units the limiter admitted
	ReferenceUnits int64 // units the reference admitted
	// QuotaServedPct is Units ÷ ReferenceUnits × 100; 100 when both are 0.
	QuotaServedPct float64
	// Contested counts the identities whose demand passed the limit in
	// some window-long interval: those the reference denied at least once.
	Contested int64
	// UnderAdmitted is, over the contested identities, the units the
	// reference admitted that the limiter did not, window by window (fixed
	// windows of the limit: Σ max(0, reference − limiter) per window), and
	// UnderAdmissionPct its share of those identities' reference units.
	UnderAdmitted     int64
	UnderAdmissionPct float64
	// BeyondUnits are the units the limiter admitted that took an
	// identity's last window past the limit.
	BeyondUnits int64
	// WronglyLimited counts the identities whose demand never passed the
	// limit in any window-long interval (the reference admitted all of it)
	// yet were denied at least once, and WronglyLimitedUnits the units
	// they were denied.
	WronglyLimited      int64
	WronglyLimitedUnits int64
	// RateErrorMeanPct and RateErrorP99Pct are the mean and the 99th
	// percentile (nearest rank) over the contested identities of
	// |Units − ReferenceUnits| ÷ ReferenceUnits × 100, identity by
	// identity; 0 with no contested identity.
	RateErrorMeanPct float64
	RateErrorP99Pct  float64
}

// NewFelt returns a Felt for a limit of window with room for identities 0
// to n−1 (it grows for larger ones).
func NewFelt(window time.Duration, n int) *Felt {
	return &Felt{window: window.Milliseconds(), ids: make([]felt, max(n, 0))}
}

// Observe records one request of n units of identity id at t (ms since
// the epoch): whether the limiter allowed it, whether the reference did,
// and how many of its units the limiter admitted past the limit.
func (f *Felt) Observe(id int32, t, n int64, allowed, refAllowed bool, beyond int64) {
	if int(id) >= len(f.ids) {
		f.ids = append(f.ids, make([]felt, int(id)+1-len(f.ids))...)
	}
	x := &f.ids[id]
	if w := floorDiv(t, f.window); !x.seen || w != x.win {
		x.under += max(0, x.ref-x.got)
		x.win, x.got, x.ref = w, 0, 0
	}
	x.seen = true
	if allowed {
		x.got += n
		x.units += n
		x.beyond += beyond
	} else {
		x.denied += n
	}
	if refAllowed {
		x.ref += n
		x.refUnits += n
	} else {
		x.contested = true
	}
}

// Result is what every identity observed felt.
func (f *Felt) Result() FeltResult {
	return f.ResultsBy(func(int32) int { return 0 }, 1)[0]
}

// ResultsBy is the FeltResult of each of groups groups of identities:
// group(id) is identity id's group, in [0, groups) (any other value: none).
func (f *Felt) ResultsBy(group func(id int32) int, groups int) []FeltResult {
	out := make([]FeltResult, groups)
	rates := make([][]float64, groups)
	contestedRef := make([]int64, groups) // reference units of contested identities
	for id := range f.ids {
		x := &f.ids[id]
		g := group(int32(id))
		if !x.seen || g < 0 || g >= groups {
			continue
		}
		r := &out[g]
		r.Units += x.units
		r.ReferenceUnits += x.refUnits
		r.BeyondUnits += x.beyond
		switch {
		case x.contested:
			r.Contested++
			r.UnderAdmitted += x.under + max(0, x.ref-x.got)
			contestedRef[g] += x.refUnits
			rates[g] = append(rates[g], rateError(x.units, x.refUnits))
		case x.denied > 0:
			r.WronglyLimited++
			r.WronglyLimitedUnits += x.denied
		}
	}
	for g := range out {
		out[g].finish(rates[g], contestedRef[g])
	}
	return out
}

// finish sets r's shares from its sums, its contested identities' rate
// errors (sorted in place) and the units the reference admitted them.
func (r *FeltResult) finish(rates []float64, contestedRef int64) {
	r.QuotaServedPct = 100
	if r.ReferenceUnits > 0 {
		r.QuotaServedPct = 100 * float64(r.Units) / float64(r.ReferenceUnits)
	}
	if contestedRef > 0 {
		r.UnderAdmissionPct = 100 * float64(r.UnderAdmitted) / float64(contestedRef)
	}
	if len(rates) == 0 {
		return
	}
	slices.Sort(rates)
	var sum float64
	for _, e := range rates {
		sum += e
	}
	r.RateErrorMeanPct = sum / float64(len(rates))
	r.RateErrorP99Pct = Percentile(rates, 99)
}

// rateError is |got − ref| ÷ ref × 100; 100 × got when ref is 0 (the
// reference admits at least one unit of any contested identity whose
// requests fit the limit, so 0 only when none does).
func rateError(got, ref int64) float64 {
	d := float64(got - ref)
	if d < 0 {
		d = -d
	}
	if ref == 0 {
		return 100 * d
	}
	return 100 * d / float64(ref)
}

// floorDiv is ⌊a ÷ b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
