package budget

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// slotLedger records, per identity and window, this PoP's uses of its free
// slot and what it tells Redis of the slot (claims, and free ops, which
// count the slot at Redis as the claim of a used one), and the first
// breach of the slot rules.
type slotLedger struct {
	uses, claims, kinc map[string]int // key|window → uses; explicit claims and 0-unit free ops; K increments (claims and free ops)
	errs               []string
}

func slotKey(k string, y int64) string { return fmt.Sprintf("%s|%d", k, y) }

func (l *slotLedger) use(step int, k string, y int64) {
	s := slotKey(k, y)
	l.uses[s]++
	if l.uses[s] > 1 {
		l.errs = append(l.errs, fmt.Sprintf("step %d: slot %s spent twice", step, s))
	}
	if l.claims[s] > 0 {
		l.errs = append(l.errs, fmt.Sprintf("step %d: slot %s spent after it was given up", step, s))
	}
}

func (l *slotLedger) sent(step int, it Item) {
	for _, y := range it.Claims {
		s := slotKey(it.Key, y)
		l.claims[s]++
		l.kinc[s]++
		if l.uses[s] > 0 {
			l.errs = append(l.errs, fmt.Sprintf("step %d: slot %s given up after it was used", step, s))
		}
	}
	for _, o := range it.Ops {
		if o.GW != GWFree {
			continue
		}
		s := slotKey(it.Key, o.X)
		l.kinc[s]++
		if o.U == 0 {
			l.claims[s]++
			if l.uses[s] > 0 {
				l.errs = append(l.errs, fmt.Sprintf("step %d: slot %s given up (0-unit op) after it was used", step, s))
			}
		}
	}
	for _, y := range it.Claims {
		if l.kinc[slotKey(it.Key, y)] > 1 {
			l.errs = append(l.errs, fmt.Sprintf("step %d: slot %s counted twice at Redis", step, slotKey(it.Key, y)))
		}
	}
	for _, o := range it.Ops {
		if o.GW == GWFree && l.kinc[slotKey(it.Key, o.X)] > 1 {
			l.errs = append(l.errs, fmt.Sprintf("step %d: slot %s counted twice at Redis (op)", step, slotKey(it.Key, o.X)))
		}
	}
}

// replied records the reply to item it, sent in a call Redis ran in
// window w: the script applies no claim past w+2 (lua/budget.lua), so
// those count nothing at Redis, and the PoP may send them again. The
// slots stay given up.
func (l *slotLedger) replied(it Item, w int64) {
	for _, y := range it.Claims {
		if y > w+giveUpAhead {
			l.kinc[slotKey(it.Key, y)]--
		}
	}
}

// freeUnits is e's unreported free units of window y.
func freeUnits(e *entry, y int64) int64 {
	var u int64
	for _, o := range e.pending() {
		if o.GW == GWFree && o.X == y {
			u += o.U
		}
	}
	return u
}

// TestPropertySlots holds one PoP's free slots to their rules over random
// interleavings, with no Redis: the Machine is handed requests stamped up
// to 2.5 windows late or 1.5 early, Ticks on a clock a little behind,
// Sync replies from half a window behind to two windows ahead naming
// random identities hot, lost replies (batches sent again), decision
// replies in any order, and Resets; a ledger of every use of a slot and
// of everything the PoP tells Redis about one checks, per identity and
// window, that a slot is spent at most once, never after it was given up,
// never given up after it was spent, and counted at Redis (claims and
// free ops) at most once. 250 steps a run, 400 runs per configuration (4
// identities and one unit of free credit; 30 identities and two units).
//
// Mutations it catches (checked by hand): the light tier ignoring
// renounced records, retire not filing the last used slot, a new full
// entry not starting from the forgotten windows, claims skipping only the
// last two used windows; and, the ledger counting no claim past a reply's
// window + 2 (the script applies none), claims Redis applied marked unsent
// again (unapplied.go: past w+1 rather than w+2, or without checking that
// no other item sent them: both fail here and in
// TestPropertySlotsAdversarial).
func TestPropertySlots(t *testing.T) {
	for _, conf := range []struct{ keys, credit int }{{4, 1}, {30, 2}} {
		keys := make([]string, conf.keys)
		for i := range keys {
			keys[i] = fmt.Sprintf("k%d", i)
		}
		for seed := uint64(1); seed <= 400; seed++ {
			if msg := slotRun(t, keys, int64(conf.credit), seed); msg != "" {
				assert.Fail(t, "slot rules broken", "%d identities, free credit %d, seed %d: %s", conf.keys, conf.credit, seed, msg)
				return
			}
		}
	}
}

// slotRun plays one random run and returns its first breach with the
// trace's last steps, or "".
func slotRun(t *testing.T, keys []string, credit int64, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 7))
	m := newTestMachine(t, func(c *Config) {
		c.FreeCredit = credit
		c.Limit.Max = 100
	})
	l := &slotLedger{uses: map[string]int{}, claims: map[string]int{}, kinc: map[string]int{}}
	clock := int64(w0)
	var batches []*Call
	type decision struct {
		c   *Call
		key string
	}
	var decisions []decision
	var trace []string
	counted := map[*Call]bool{}
	for step := 0; step < 250 && len(l.errs) == 0; step++ {
		clock += rng.Int64N(testWindow / 3)
		if rng.IntN(40) == 0 {
			k := keys[rng.IntN(len(keys))]
			c := m.Reset(clock, k)
			m.ResetDone(c, nil) // applied at once: its claims are counted in the ledger
			for _, o := range c.Items[0].Ops {
				if o.GW == GWFree {
					l.kinc[slotKey(k, o.X)]++
				}
			}
			trace = append(trace, fmt.Sprintf("Reset(%s) ops %v", k, c.Items[0].Ops))
		}
		switch op := rng.IntN(10); {
		case op < 5: // a request, stamped late or early one time in three
			k := keys[rng.IntN(len(keys))]
			now := clock
			if rng.IntN(3) == 0 {
				now = clock + rng.Int64N(4*testWindow) - 3*testWindow + testWindow/2
			}
			n := 1 + rng.Int64N(2)
			y := m.window(now)
			e0 := m.view[k]
			var before int64
			if e0 != nil {
				before = freeUnits(e0, y)
			}
			d, c := m.Request(now, k, n)
			trace = append(trace, fmt.Sprintf("Request(%d [x%d], %s, %d) → %v %v, call %v", now, y, k, n, d.Allowed, d.Source, c != nil))
			switch {
			case c != nil:
				trace = append(trace, fmt.Sprintf("  decision item claims %v ops %v slot %d", c.Items[0].Claims, c.Items[0].Ops, c.req.slot))
				l.sent(step, c.Items[0])
				decisions = append(decisions, decision{c, k})
			case d.Source == SrcFree:
				l.use(step, k, y)
			case d.Source == SrcGrant && e0 != nil && m.view[k] == e0 && freeUnits(e0, y) > before:
				l.use(step, k, y) // the free slot and a grant together
			}
		case op < 7: // a Tick, its clock a little behind
			for _, c := range m.Tick(clock - rng.Int64N(testWindow/4)) {
				if c.redo {
					continue
				}
				if !counted[c] {
					counted[c] = true
					for _, it := range c.Items {
						l.sent(step, it)
						trace = append(trace, fmt.Sprintf("  item %s claims %v ops %v", it.Key, it.Claims, it.Ops))
					}
				}
				batches = append(batches, c)
			}
			trace = append(trace, fmt.Sprintf("Tick(x%d)", m.window(clock)))
		case op < 8 && len(batches) > 0: // a batch's reply, its window maybe ahead
			i := rng.IntN(len(batches))
			c := batches[i]
			batches = append(batches[:i], batches[i+1:]...)
			if rng.IntN(6) == 0 {
				trace = append(trace, "Finish(lost)")
				m.Finish(c, nil, errors.New("lost"))
				break
			}
			rnow := clock + rng.Int64N(2*testWindow) - testWindow/2
			r := &Result{Now: rnow, Window: m.window(rnow), Items: make([]ItemResult, len(c.Items))}
			for j := range r.Items {
				r.Items[j] = ItemResult{Allowed: -1, Grant: rng.Int64N(3), CW: rng.Int64N(10), Headroom: rng.Int64N(10)}
			}
			for _, k := range keys {
				if rng.IntN(3) == 0 {
					r.Hot = append(r.Hot, HotKey{Key: k, Bucket: m.bucket(k)})
				}
			}
			trace = append(trace, fmt.Sprintf("Finish(x%d, hot %v)", r.Window, r.Hot))
			for _, it := range c.Items {
				l.replied(it, r.Window)
			}
			m.Finish(c, r, nil)
		case len(decisions) > 0: // a decision's reply
			i := rng.IntN(len(decisions))
			dc := decisions[i]
			decisions = append(decisions[:i], decisions[i+1:]...)
			if rng.IntN(8) == 0 {
				m.Complete(clock, dc.c, nil, errors.New("lost"))
				trace = append(trace, "Complete(lost)")
				break
			}
			rnow := clock + rng.Int64N(testWindow)
			allowed := rng.Int64N(2)
			p := dc.c.req
			l.replied(dc.c.Items[0], m.window(rnow))
			m.Complete(clock, dc.c, &Result{Now: rnow, Window: m.window(rnow), Items: []ItemResult{{Allowed: allowed, Grant: rng.Int64N(3), CW: rng.Int64N(10), Headroom: rng.Int64N(10)}}}, nil)
			trace = append(trace, fmt.Sprintf("Complete(%s allowed %d slot %d x%d)", dc.key, allowed, p.slot, p.x))
			if p.slot > 0 && allowed == 1 {
				l.use(step, dc.key, p.x)
			}
		}
	}
	if len(l.errs) == 0 {
		return ""
	}
	return fmt.Sprintf("%v; last steps: %v", l.errs, trace[max(0, len(trace)-30):])
}
