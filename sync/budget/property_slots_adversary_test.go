package budget

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// advKnobs shape slotRunAdv's adversary.
type advKnobs struct {
	keys        int
	credit      int64
	farAhead    int64 // a request may be stamped up to this many windows ahead
	farLate     int64 // or this many behind
	resetEvery  int   // 1 in resetEvery steps a Reset
	jumpEvery   int   // 1 in jumpEvery steps the clock jumps a few windows
	replySpread int64 // Sync replies' window: clock ± this many windows
}

// TestPropertySlotsAdversarial is TestPropertySlots' ledger (every free
// slot used at most once, never after it was given up, no window claimed
// twice) under a harsher adversary: requests stamped up to twelve windows
// ahead of the clock and four behind, clock jumps of up to four windows,
// more Resets, Sync replies up to three windows either side, lost
// decision replies whose decision on the view spends free credit, and
// two units of free credit. 300 runs of 300 steps per knob set, no Redis.
// Mutations it catches: claims that reach a window older than the used-slot
// mask (grants.go, claims: 51 and 70 of 300 runs of the first two knob
// sets broke a rule before the mask's reach was checked).
func TestPropertySlotsAdversarial(t *testing.T) {
	const runs = 300
	for _, k := range []advKnobs{
		{keys: 3, credit: 1, farAhead: 12, farLate: 4, resetEvery: 15, jumpEvery: 30, replySpread: 2},
		{keys: 6, credit: 2, farAhead: 12, farLate: 4, resetEvery: 40, jumpEvery: 20, replySpread: 3},
		{keys: 2, credit: 1, farAhead: 2, farLate: 2, resetEvery: 10, jumpEvery: 50, replySpread: 1},
	} {
		keys := make([]string, k.keys)
		for i := range keys {
			keys[i] = fmt.Sprintf("k%d", i)
		}
		fails := 0
		for seed := uint64(1); seed <= uint64(runs); seed++ {
			if msg := slotRunAdv(t, keys, k, seed); msg != "" {
				fails++
				if fails <= 2 {
					assert.Empty(t, msg, "%+v seed %d", k, seed)
				}
			}
		}
		if fails > 0 {
			t.Logf("%+v: %d of %d runs broke a slot rule", k, fails, runs)
		}
	}
}

func slotRunAdv(t *testing.T, keys []string, k advKnobs, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 11))
	m := newTestMachine(t, func(c *Config) {
		c.FreeCredit = k.credit
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
	for step := 0; step < 300 && len(l.errs) == 0; step++ {
		clock += rng.Int64N(testWindow / 3)
		if rng.IntN(k.jumpEvery) == 0 {
			clock += rng.Int64N(4 * testWindow)
		}
		if rng.IntN(k.resetEvery) == 0 {
			key := keys[rng.IntN(len(keys))]
			c := m.Reset(clock, key)
			m.ResetDone(c, nil) // applied at once: its claims are counted in the ledger
			for _, o := range c.Items[0].Ops {
				if o.GW == GWFree {
					l.kinc[slotKey(key, o.X)]++
				}
			}
			trace = append(trace, fmt.Sprintf("Reset(%s) ops %v", key, c.Items[0].Ops))
		}
		switch op := rng.IntN(10); {
		case op < 5:
			key := keys[rng.IntN(len(keys))]
			now := clock
			switch rng.IntN(6) {
			case 0:
				now = clock - rng.Int64N(k.farLate*testWindow+1)
			case 1:
				now = clock + rng.Int64N(k.farAhead*testWindow+1)
			case 2:
				now = clock + rng.Int64N(4*testWindow) - 3*testWindow + testWindow/2
			}
			n := 1 + rng.Int64N(k.credit+1)
			y := m.window(now)
			e0 := m.view[key]
			var before int64
			if e0 != nil {
				before = freeUnits(e0, y)
			}
			d, c := m.Request(now, key, n)
			trace = append(trace, fmt.Sprintf("Request(x%d, %s, %d) → %v %v, call %v [forgot %d tick %d light %d ren %d]", y, key, n, d.Allowed, d.Source, c != nil, m.forgot, m.tickX, m.lightX, m.ren.renX))
			spent := false
			switch {
			case c != nil:
				trace = append(trace, fmt.Sprintf("  decision item claims %v ops %v slot %d", c.Items[0].Claims, c.Items[0].Ops, c.req.slot))
				l.sent(step, c.Items[0])
				decisions = append(decisions, decision{c, key})
			case d.Source == SrcFree:
				spent = true
			case d.Source == SrcGrant && e0 != nil && m.view[key] == e0 && freeUnits(e0, y) > before:
				spent = true
			}
			if spent {
				l.use(step, key, y)
			}
		case op < 7:
			for _, c := range m.Tick(clock - rng.Int64N(testWindow/4)) {
				if c.redo {
					batches = append(batches, c)
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
		case op < 8 && len(batches) > 0:
			i := rng.IntN(len(batches))
			c := batches[i]
			batches = append(batches[:i], batches[i+1:]...)
			if rng.IntN(5) == 0 {
				trace = append(trace, "Finish(lost)")
				m.Finish(c, nil, errors.New("lost"))
				break
			}
			rnow := clock + rng.Int64N((2*k.replySpread+1)*testWindow) - k.replySpread*testWindow
			r := &Result{Now: rnow, Window: m.window(rnow), Items: make([]ItemResult, len(c.Items))}
			for j := range r.Items {
				r.Items[j] = ItemResult{Allowed: -1, Grant: rng.Int64N(3), CW: rng.Int64N(10), Headroom: rng.Int64N(30)}
			}
			for _, key := range keys {
				if rng.IntN(3) == 0 {
					r.Hot = append(r.Hot, HotKey{Key: key, Bucket: m.bucket(key)})
				}
			}
			trace = append(trace, fmt.Sprintf("Finish(x%d, hot %v)", r.Window, r.Hot))
			for _, it := range c.Items {
				l.replied(it, r.Window)
			}
			m.Finish(c, r, nil)
		case len(decisions) > 0:
			i := rng.IntN(len(decisions))
			dc := decisions[i]
			decisions = append(decisions[:i], decisions[i+1:]...)
			p := dc.c.req
			e0 := p.e
			var before int64
			if rng.IntN(5) == 0 {
				cx := m.window(clock)
				before = freeUnits(e0, cx)
				d := m.Complete(clock, dc.c, nil, errors.New("lost"))
				trace = append(trace, fmt.Sprintf("Complete(lost, x%d) → %v %v", cx, d.Allowed, d.Source))
				// the view decides at Complete's now; the slot's 0-unit op (settle) is not a use
				if d.Source == SrcFree || (d.Source == SrcGrant && freeUnits(e0, cx) > before) {
					l.use(step, dc.key, cx)
				}
				break
			}
			rnow := clock + rng.Int64N(testWindow)
			allowed := rng.Int64N(2)
			l.replied(dc.c.Items[0], m.window(rnow))
			m.Complete(clock, dc.c, &Result{Now: rnow, Window: m.window(rnow), Items: []ItemResult{{Allowed: allowed, Grant: rng.Int64N(3), CW: rng.Int64N(10), Headroom: rng.Int64N(30)}}}, nil)
			trace = append(trace, fmt.Sprintf("Complete(%s allowed %d slot %d x%d)", dc.key, allowed, p.slot, p.x))
			if p.slot > 0 && allowed == 1 {
				l.use(step, dc.key, p.x)
			}
		}
	}
	if len(l.errs) == 0 {
		return ""
	}
	return fmt.Sprintf("%v; last steps: %v", l.errs, trace[max(0, len(trace)-25):])
}
