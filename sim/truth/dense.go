package truth

import "time"

// Dense is a Judge of identities numbered from 0 (a trace's): it keeps
// their logs in a slice indexed by number instead of a map, so an
// observation costs no hashing and one pointer less, and it tells the
// over-admission of groups of identities (ResultsBy), so one Dense
// judges a run's classes too. Its verdicts are a Judge's on the same
// decisions.
type Dense struct {
	limit  int64
	window int64
	ids    []history
	tally  Tally
}

// NewDense returns a Dense for limit units per window with room for
// identities 0 to n−1 (it grows for larger ones).
func NewDense(limit int64, window time.Duration, n int) *Dense {
	return &Dense{limit: limit, window: window.Milliseconds(), ids: make([]history, max(n, 0))}
}

// Observe records one decision on n units of identity id (≥ 0) at t (ms
// since the epoch), and whether it was allowed. It returns whether the
// exact log said to allow.
func (d *Dense) Observe(id int32, t, n int64, allowed bool) (right bool) {
	right, _ = d.ObserveBeyond(id, t, n, allowed)
	return right
}

// ObserveBeyond is Observe, and also returns how many of the decision's
// units, when allowed, took the identity's last window past the limit:
// min(n, held + n − limit) when that is positive, held being the units
// admitted in (t − window, t] before it; 0 when denied.
func (d *Dense) ObserveBeyond(id int32, t, n int64, allowed bool) (right bool, beyond int64) {
	d.grow(id)
	right, beyond = d.ids[id].observe(t, n, d.limit, d.window, allowed)
	d.tally.count(allowed, right, n)
	return right, beyond
}

// Admit decides n units of identity id at t (ms) as the ideal limiter
// does: one exact sliding log over every PoP, deciding each request at its
// own instant with no network between. It allows when the units the
// identity was admitted in (t − window, t] plus n are at most the limit,
// records the admission, and returns whether it allowed. A Dense fed only
// through Admit is the reference every mode is compared with; its tally
// has no false decision.
func (d *Dense) Admit(id int32, t, n int64) bool {
	d.grow(id)
	h := &d.ids[id]
	h.expire(t, d.window)
	allow := h.units < d.limit-n+1
	h.observe(t, n, d.limit, d.window, allow)
	d.tally.count(allow, allow, n)
	return allow
}

// grow makes room for identity id.
func (d *Dense) grow(id int32) {
	if int(id) >= len(d.ids) {
		d.ids = append(d.ids, make([]history, int(id)+1-len(d.ids))...)
	}
}

// Result summarises everything observed so far, as Judge.Result does.
func (d *Dense) Result() Result {
	return Result{Tally: d.tally}.withPeaks(d.peaks(func(int32) int { return 0 }, 1)[0])
}

// ResultsBy is the Result of each group of identities, as a Judge fed
// only that group's decisions would give it: group(id) is identity id's
// group, in [0, len(tallies)) (any other value: none), and tallies[g] the
// tally of group g's decisions (the caller's: Dense keeps only the whole
// one).
func (d *Dense) ResultsBy(group func(id int32) int, tallies []Tally) []Result {
	out := make([]Result, len(tallies))
	for g, peaks := range d.peaks(group, len(tallies)) {
		out[g] = Result{Tally: tallies[g]}.withPeaks(peaks)
	}
	return out
}

// peaks is, by group, the over-admission of every identity of the group
// (see ResultsBy) that made a decision, unsorted.
func (d *Dense) peaks(group func(id int32) int, groups int) [][]float64 {
	out := make([][]float64, groups)
	for id := range d.ids {
		h := &d.ids[id]
		if g := group(int32(id)); h.seen && g >= 0 && g < groups {
			out[g] = append(out[g], float64(h.peak)/float64(d.limit))
		}
	}
	return out
}
