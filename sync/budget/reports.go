package budget

import "slices"

// reportWindow is how many decision Calls carrying reports may be
// outstanding (in flight, or whose report waits to be sent again) at once,
// by sequence number: the width of Redis' anti-replay window for them
// (lua/budget.lua keeps, per incarnation and group, the highest number
// applied and a 32-bit mask of the 32 numbers below and including it).
const reportWindow = 32

// reports is a Machine's decision Calls that carry a report of their
// identity (unreported spends, slots given up): their sequence, the Calls
// in flight, and the reports whose reply never came, which Tick sends
// again under the same number. Redis applies each number at most once, in
// any order within the window; a number older than the window is
// refused, so a new Call carries a report only while the oldest
// outstanding number is within the window of it (a refused report is
// never unsafe: spends stay counted as granted, slots stay reserved).
// The zero value has none. A failed Reset's ops are sent again the same
// way, under the Reset's own sequence ('rseq', numbered by the Machine),
// which room does not weigh (fits weighs each sequence apart). Redis keeps
// each sequence's guard max(4 windows + slack, 5 minutes), longer than
// go-redis' retries of a call take to arrive with its default options
// (about 130 s), so a retry that outlived four short windows is not
// applied again (TestResetRetryAfterFourWindowsAppliedOnce).
type reports struct {
	seq    uint64
	out    []*Call // decision Calls in flight
	redo   []*Call // reports to send again (redo: true); sent marks those in flight
	sent   map[*Call]bool
	resets []*Call // Reset Calls in flight, whose ops count as unreported (reset.go)
}

// room reports whether a new report may go out under seq+1.
func (r *reports) room() bool { return r.fits("dseq", r.seq+1) }

// fits reports whether number next of guard's sequence ("dseq": the
// decisions' reports; "rseq": the Resets', numbered by the Machine) keeps
// every outstanding number of that sequence, in flight or waiting to be
// sent again, within the window Redis keeps of it once next is applied: a
// number reportWindow or more below the highest applied is refused, so
// what it carries would never be applied.
func (r *reports) fits(guard string, next uint64) bool {
	for _, cs := range [3][]*Call{r.out, r.redo, r.resets} {
		for _, c := range cs {
			if c.guard == guard && next-c.Seq >= reportWindow {
				return false
			}
		}
	}
	return true
}

// take numbers decision Call c, which carries a report.
func (r *reports) take(c *Call) {
	r.seq++
	c.Seq, c.guard = r.seq, "dseq"
	r.out = append(r.out, c)
}

// done removes decision Call c from the Calls in flight; when its reply
// never came (failed), its report is kept to be sent again.
func (r *reports) done(c *Call, failed bool) {
	i := slices.Index(r.out, c)
	if i < 0 {
		return
	}
	r.out = slices.Delete(r.out, i, i+1)
	if failed {
		it := c.Items[0]
		// the same announcement goes along: Redis counts the claims against it
		r.redo = append(r.redo, &Call{Group: c.Group, Seq: c.Seq, Now: c.Now, hotWin: -1, guard: c.guard, redo: true, announce: c.announce,
			Items: []Item{{Key: it.Key, Bucket: it.Bucket, Claims: it.Claims, Ops: it.Ops}}})
	}
}

// resend returns the reports to send again that are not in flight, and
// marks them in flight.
func (r *reports) resend() []*Call {
	var out []*Call
	for _, c := range r.redo {
		if !r.sent[c] {
			if r.sent == nil {
				r.sent = map[*Call]bool{}
			}
			r.sent[c] = true
			out = append(out, c)
		}
	}
	return out
}

// resent applies the outcome of report c sent again: applied (or found
// applied) when ok, else kept for the next Tick.
func (r *reports) resent(c *Call, ok bool) {
	delete(r.sent, c)
	if ok {
		if i := slices.Index(r.redo, c); i >= 0 {
			r.redo = slices.Delete(r.redo, i, i+1)
		}
	}
}

// count adds to *u the units of key's ops in window y that outstanding
// reports carry, and the Resets in flight took (as the view held them).
func (r *reports) count(key string, y int64, u *int64) {
	add := func(ops []Op) {
		for _, o := range ops {
			if o.X == y {
				*u += o.U
			}
		}
	}
	for _, cs := range [2][]*Call{r.out, r.redo} {
		for _, c := range cs {
			if c.Items[0].Key == key {
				add(c.Items[0].Ops)
			}
		}
	}
	for _, c := range r.resets {
		if c.Items[0].Key == key {
			add(c.reset.ops)
		}
	}
}
