package budget

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPropertyLease is TestPropertyBudget's invariant where Redis alone
// knows who may spend free credit (lease.go): every PoP (every
// incarnation) is configured as if alone, PoPs 1 and one unit of free
// credit, in a deployment of propPoPs, so the caller's own reservation,
// c × max(0, 1 − K), covers at most one slot and the rest is the announced
// spenders' term. Each run is one of TestPropertyBudget's (the same
// traffic, losses, duplicates, reordering, crashes, gossip and judge),
// alternating 1 s and 400 ms windows, plus:
//
//   - a contest in every window: a new identity, which every PoP asks one
//     unit of at about the same time (its free slot: the identity is new
//     everywhere, no reply has named it hot yet); then either (early in
//     the window) every PoP asks Max − propPoPs + 1 units and one PoP a
//     few single units, so what Redis decides fills what its reservation
//     leaves beside slots it was told nothing about, or (in the window's
//     last 90 ms) one PoP that reaches Redis asks Max − propPoPs units
//     and a few singles, and the others ask one unit again just after the
//     next window starts (their next slot, which E1 reserves);
//   - two PoPs cut off from Redis (every Call they send lost on the way)
//     for 8 or 9 windows from the second or third: their leases lapse
//     about three windows in, Redis stops counting them, and they decide
//     on what they hold while the others fill the contests;
//   - a return where the cut ends (1 s windows; the cut ends 100–300 ms
//     into one): three new identities that the PoPs reaching Redis fill
//     at that window's start, less their slots of it and of the next;
//     each cut-off PoP asks one unit of each 600 ms after the cut (its
//     lease renewed by then), and every PoP one more just after the next
//     window starts. Redis counted the returning PoPs after the fill, so
//     spending free credit there takes those identities past the limit;
//   - Ticks from three windows before the first request, so every PoP
//     holds its lease when requests come.
//
// The judge is TestPropertyBudget's, with no allowance for a first
// count: a lease starts only in windows whose decisions so far reserved
// for the incarnation (lua/budget.lua, "The first count"). (Before that
// rule the judge allowed c per window from the first newly counted to two
// after; over 2,000 runs none needed it, nor does any run now.)
//
// Mutations it catches (three runs of the test each, the failing seed
// printed), with the share of runs that fail (of 400, counted under the
// earlier judge; the first fails 3/3 under this one too):
//   - reserving free credit by the caller's FreeCredit and PoPs alone
//     (lua: anyN forced false): 3/3; 342 runs;
//   - spending free credit before Redis counted this PoP (credit and
//     creditOf returning Config.FreeCredit whatever the lease): 3/3; 355
//     runs;
//   - E without the window's announced spenders (lua: rw the caller's
//     term alone): 3/3; 237 runs;
//   - E1 without the next window's announced spenders (lua: r1 the
//     caller's term alone): 3/3; 143 runs (TestScriptMatchesReference
//     catches these two as well);
//   - the script leaving a lease's first window where it was (lua: from
//     not moved past an unreserved window): 6/6 by the judge, on the
//     returns' identities (and always by the count of leases started
//     ahead, which must be positive);
//   - free credit ignoring the lease's first window (credit and creditOf
//     gating on the last window alone): 6/6 by the judge, on the returns'
//     identities. (Without the returns the judge caught neither: the
//     first-count excess never showed in 2,000 runs.)
//
// Not caught: announcing two windows ahead instead of three (lease.go:
// x+2 in announce and leaseDue), 0 of 200 runs: the window it opens is a
// grant made in y−2 before the announcement, spent in y−1 and weighing
// fully at y's start beside the slot.
func TestPropertyLease(t *testing.T) {
	propLeaseLapsed, propLeaseFills, propLeaseDelayed, propLeaseReturns = 0, 0, 0, 0
	propertyRuns(t, 16, []propConfig{propAlone}, false)
	t.Logf("requests at a PoP whose lease had lapsed: %d; contests filled at Redis: %d; leases that started ahead: %d; returns' identities: %d", propLeaseLapsed, propLeaseFills, propLeaseDelayed, propLeaseReturns)
	require.Positive(t, propLeaseLapsed, "the cut-off PoPs' leases lapsed while requests came")
	require.Positive(t, propLeaseFills, "Redis admitted some contests' large requests")
	require.Positive(t, propLeaseDelayed, "some leases started windows ahead (the first count)")
	require.Positive(t, propLeaseReturns, "the 1 s runs had returns (their identities are what catch the first count's mutations)")
}

// propLeaseLapsed counts the requests TestPropertyLease's runs made at a
// PoP whose lease on the identity's group had lapsed; propLeaseDelayed
// the leases Redis started after the window it counted them in;
// propLeaseFills the
// large requests of its contests Redis admitted.
var propLeaseLapsed, propLeaseFills, propLeaseDelayed, propLeaseReturns uint64

// leaseRun is a lease run's own part (propAlone; the zero value, any
// other run's, does nothing): the PoPs cut off from Redis and when, and
// each incarnation's lease per group as its replies said.
type leaseRun struct {
	cutOff   []int // the PoPs cut off from Redis
	from, to int64 // when (ms)
	last     map[leaseKey]int64
}

// leaseKey is an incarnation's lease on a group.
type leaseKey struct {
	inc   uint64
	group int
}

// traffic pushes a lease run's contests, picks the PoPs cut off and
// returns when the Ticks start.
func (l *leaseRun) traffic(rng *rand.Rand, push func(*propEvent), start, horizon, w int64) int64 {
	l.last = map[leaseKey]int64{}
	l.cutOff = rng.Perm(propPoPs)[:2]
	l.from = start + (1+rng.Int64N(2))*w + rng.Int64N(w)
	l.to = (l.from/w+8+rng.Int64N(2))*w + 100 + rng.Int64N(200) // early in a window: time for a return (below)
	for x := start/w + 1; x < horizon/w; x++ {
		key := fmt.Sprint("f", x)
		t0 := x*w + rng.Int64N(w/2)
		late := rng.IntN(2) == 0
		if late {
			t0 = (x+1)*w - 60 - rng.Int64N(30)
		}
		filler := rng.IntN(propPoPs)
		for l.cut(filler, t0) {
			filler = rng.IntN(propPoPs) // a PoP that reaches Redis
		}
		for p := range propPoPs {
			push(&propEvent{at: t0 + rng.Int64N(20), kind: 0, pop: p, key: key, n: 1})
			switch {
			case late && p == filler:
				push(&propEvent{at: t0 + 20 + rng.Int64N(10), kind: 0, pop: p, key: key, n: propMax - propPoPs})
			case !late:
				push(&propEvent{at: t0 + 30 + rng.Int64N(40), kind: 0, pop: p, key: key, n: propMax - propPoPs + 1})
			default:
				push(&propEvent{at: (x+1)*w + rng.Int64N(20), kind: 0, pop: p, key: key, n: 1})
			}
		}
		p := filler
		for i := range 6 {
			push(&propEvent{at: t0 + 80 + int64(i)*(10+rng.Int64N(20)), kind: 0, pop: p, key: key, n: 1})
		}
	}
	// A return (1 s windows: the cut ends 100–300 ms into a window): at
	// that window's start the PoPs that reach Redis spend their free slots
	// of a new identity and one fills what Redis leaves (the limit less
	// this window's and the next window's slots of the PoPs counted); then
	// each PoP that was cut off, its lease renewed by then (600 ms after
	// the cut: its batch in flight fails at the 300 ms timeout, the next
	// Tick's goes through), asks one unit of it, and just after the next
	// window starts every PoP asks one more. Redis counted the returning
	// PoPs after the fill, whose E and E1 did not reserve for them (the
	// first count): had they spent free credit in either window, the next
	// window's slots would take the identity past its limit.
	x0 := l.to / w
	returns := 0
	if l.to+650 < (x0+1)*w {
		returns = 3 // three identities, each its own chance
	}
	for k := range returns {
		t1 := x0*w + 5 + int64(k)*20
		key := fmt.Sprint("r", x0, "-", k)
		var live []int
		for p := range propPoPs {
			if !slices.Contains(l.cutOff, p) {
				live = append(live, p)
				push(&propEvent{at: t1 + rng.Int64N(10), kind: 0, pop: p, key: key, n: 1})
			}
		}
		push(&propEvent{at: t1 + 20 + rng.Int64N(10), kind: 0, pop: live[rng.IntN(len(live))], key: key, n: propMax - 2*int64(len(live))})
		for _, p := range l.cutOff {
			push(&propEvent{at: l.to + 600 + rng.Int64N(20), kind: 0, pop: p, key: key, n: 1})
		}
		for p := range propPoPs {
			push(&propEvent{at: (x0+1)*w + rng.Int64N(20), kind: 0, pop: p, key: key, n: 1})
		}
		propLeaseReturns++
	}
	return start - 3*w
}

// cut reports whether a Call PoP p sends at at is lost on the way.
func (l *leaseRun) cut(p int, at int64) bool {
	return l.last != nil && slices.Contains(l.cutOff, p) && at >= l.from && at < l.to
}

// asked notes a request of key at m, PoP p, at at.
func (l *leaseRun) asked(m *Machine, p int, at int64, key string) {
	if l.cut(p, at) && m.window(at) > m.groups[m.group(m.bucket(key))].leased {
		propLeaseLapsed++
	}
}

// ran notes Call c of m that Redis ran, replying r: a fill of a contest,
// and a new lease that starts after Redis' window (propLeaseDelayed).
func (l *leaseRun) ran(m *Machine, c *Call, r *Result) {
	if l.last == nil {
		return
	}
	if c.Decision() && c.Items[0].N > propMax/2 && r.Items[0].Allowed == 1 {
		propLeaseFills++
	}
	if r.Leased < 0 {
		return // c announced nothing
	}
	k := leaseKey{m.cfg.Incarnation, c.Group}
	if have, ok := l.last[k]; ok && r.Leased <= have {
		return
	}
	if r.LeasedFrom > r.Window {
		propLeaseDelayed++
	}
	l.last[k] = r.Leased
}
