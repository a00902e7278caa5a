package budget

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUsedSlotPastTheMask: a slot used in window x, its op still
// unsent, then a free unit stamped eight windows ahead (the lease reaching
// there through an earlier early-stamped decision Call), then a request
// stamped back in x: its decision Call must not give x's used slot up
// (its op already claims it at Redis; a second claim hides another PoP's
// slot, and a used slot given up frees the unit it admitted).
func TestUsedSlotPastTheMask(t *testing.T) {
	m := newTestMachine(t, nil)
	for g := range m.groups { // a realistic lease: through the Tick's window + 3
		m.groups[g] = groupState{leased: math.MinInt64, leasedFrom: math.MinInt64, checkedTo: math.MinInt64, keptFrom: math.MinInt64, keptTo: math.MinInt64}
	}
	m.lease, m.leaseFrom = math.MinInt64, math.MinInt64
	x := int64(w0 / testWindow)
	for g := range m.groups {
		m.leaseTo(g, x-5, x+3)
	}
	m.Tick(w0 + 50)
	d, c := m.Request(w0+100, "k", 1)
	require.Nil(t, c)
	require.Equal(t, SrcFree, d.Source, "k's slot of x, in a light record")

	// the lease reaching x+8: as an early-stamped decision Call renews it
	// (TestFarStampKeepsTheLease), or any other way
	far := (x+8)*testWindow + 100
	for g := range m.groups {
		m.leaseTo(g, x+7, x+11)
	}

	d, c = m.Request(far+10, "k", 1) // k's free unit of x+8 (a full entry: ahead of the Ticks)
	require.Nil(t, c)
	require.Equal(t, SrcFree, d.Source)

	_, c = m.Request(w0+200, "k", 1) // back in x: its slot is used, Redis decides
	require.NotNil(t, c)
	var freeOps []int64
	for _, o := range c.Items[0].Ops {
		if o.GW == GWFree {
			freeOps = append(freeOps, o.X)
		}
	}
	t.Logf("claims %v, free ops of windows %v (x = %d)", c.Items[0].Claims, freeOps, x)
	assert.NotContains(t, c.Items[0].Claims, x, "x's slot was used (its op claims it): not given up again")
}

// TestFarStampKeepsTheLease: one request stamped far ahead of the
// PoP's clock (AllowN takes the caller's time) must not end this PoP's
// free credit for the windows until its clock gets there: the lease of
// its group is renewed from the request's window, Redis skips the windows
// between, and no later renewal is due until then.
func TestFarStampKeepsTheLease(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	m := leaseMachine(t, "a", 1, 1, 2)
	w := int64(77)
	now := w*testWindow + 10
	takeLease(t, rdb, m, now)
	d := decideAt(t, m, "calm0", now+5, func(m *Machine, c *Call) (*Result, error) { return Exec(ctx, rdb, m, c, c.Now) })
	require.Equal(t, SrcFree, d.Source, "a calm identity's first unit is free")

	far := now + 50*testWindow // one caller's clock, or a bad timestamp
	decideAt(t, m, "j", far, func(m *Machine, c *Call) (*Result, error) { return Exec(ctx, rdb, m, c, c.Now) })

	for i := int64(1); i <= 6; i++ {
		at := now + i*testWindow
		for _, c := range m.Tick(at) {
			r, err := Exec(ctx, rdb, m, c, at)
			m.Finish(c, r, err)
		}
		d, c := m.Request(at+5, fmt.Sprintf("calm%d", i), 1)
		if c != nil {
			r, err := Exec(ctx, rdb, m, c, c.Now)
			d = m.Complete(at+5, c, r, err)
		}
		assert.Equal(t, SrcFree, d.Source, "window %d: a new calm identity's unit is still free (lease %d..%d, kept %d..%d)",
			w+i, m.groups[0].leasedFrom, m.groups[0].leased, m.groups[0].keptFrom, m.groups[0].keptTo)
	}
}

// TestPeekAfterAnEarlyStamp: the light tier one window ahead of the
// PoP's clock (a request stamped a little early rolled it, as forget.go
// allows), a calm identity's free unit of the PoP's window x is in a light
// record of window lightX−1. A peek of it in x must not count that slot,
// which the request will not get (Redis decides it, and its headroom is 0).
func TestPeekAfterAnEarlyStamp(t *testing.T) {
	m := newTestMachine(t, nil)
	x := int64(w0 / testWindow)
	m.Tick(w0 + 50)
	d, c := m.Request(w0+100, "k", 1)
	require.Nil(t, c)
	require.Equal(t, SrcFree, d.Source, "k's slot of x")
	desc := m.Describe(w0+100, "k", 1, d)
	d, c = m.Request(w0+testWindow+100, "early", 1) // stamped in x+1: the light tier rolls to x+1
	require.Nil(t, c)
	require.Equal(t, x+1, m.lightX)
	desc2 := m.Describe(w0+150, "k", 1, Decision{Allowed: true, Source: SrcFree})

	_, pc := m.Peek(w0+200, "k")
	require.NotNil(t, pc)
	pd := m.PeekDone(w0+250, pc, &Result{Now: w0 + 220, Window: x, Items: []ItemResult{{Headroom: 0, CW: 5, CPrev: 4, Retry: 500}}}, nil)
	_, call := m.Request(w0+260, "k", 1)
	require.NotNil(t, call, "k's slot of x is spent: Redis decides (headroom 0)")
	assert.False(t, pd.Allowed, "the peek counts no spent slot")
	assert.Equal(t, int64(9), desc.Remaining, "Describe after the free unit counts it (10 - 1)")
	assert.Equal(t, desc.Remaining, desc2.Remaining, "and still counts it once the tier rolled a window ahead")
	t.Logf("Remaining before the roll %d, after %d", desc.Remaining, desc2.Remaining)
}

// TestDoubleClaimOverAdmits: TestUsedSlotPastTheMask on a real Redis.
// Three PoPs (P = 3, one unit of free credit, limit 10). PoP A spends its
// free unit of x, then (its lease reaching there) one stamped eight
// windows ahead, so the used bit of x fell out of usedMask; A's decision
// Call in x then reported x's free unit (the op claims the slot) and gave
// the same slot up again. "ops counted": K_x counted A three times (op,
// claim, and the op of x+8, which Redis counts in its own window), so R_x
// reserved nothing for B and C. "after a Reset": A's ops went out first
// with a Reset (0-unit free ops: the slots claimed, nothing counted), and
// K_x counted A twice. A fills the identity at Redis; B and C spend their
// free units of x and of x+1: the sliding estimate of what the PoPs
// admitted reached 11.
func TestDoubleClaimOverAdmits(t *testing.T) {
	for _, reset := range []bool{false, true} {
		name := map[bool]string{false: "ops counted", true: "after a Reset"}[reset]
		t.Run(name, func(t *testing.T) {
			rdb, _ := redistest.Client(t)
			ctx := context.Background()
			exec := func(m *Machine, c *Call) (*Result, error) { return Exec(ctx, rdb, m, c, c.Now) }
			mk := func(pop string, inc uint64) *Machine {
				m, err := NewMachine(Config{PoP: pop, Incarnation: inc, Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 3, FreeCredit: 1})
				require.NoError(t, err)
				return m
			}
			a, b, c := mk("a", 1), mk("b", 2), mk("c", 3)
			x := int64(77)
			now := x*testWindow + 10
			for _, m := range []*Machine{a, b, c} {
				takeLease(t, rdb, m, now)
			}
			var truth []admission
			admit := func(m *Machine, at int64, key string) Decision {
				d := decideAt(t, m, key, at, exec)
				if d.Allowed && key == "k" {
					truth = append(truth, admission{at, 1})
				}
				return d
			}
			require.Equal(t, SrcFree, admit(a, now+20, "k").Source, "A's free unit of x")
			far := (x+8)*testWindow + 100
			for g := range a.groups { // A's lease reaching x+8, as an early-stamped decision Call's renewal did before it announced nothing
				a.leaseTo(g, x+7, x+11)
			}
			require.Equal(t, SrcFree, admit(a, far+10, "k").Source, "A's free unit of x+8 (a full entry ahead of the Ticks)")
			truth = truth[:len(truth)-1] // not in the windows judged
			if reset {
				rc := a.Reset(now+25, "k")
				_, err := exec(a, rc)
				require.NoError(t, err)
				a.ResetDone(rc, nil)
				truth = truth[:0] // what the Reset forgot
			}
			for i := range 20 {
				admit(a, now+30+int64(i), "k") // A's requests at Redis fill k in x
			}
			require.Equal(t, SrcFree, admit(b, (x+1)*testWindow-50, "k").Source, "B's free unit of x")
			require.Equal(t, SrcFree, admit(c, (x+1)*testWindow-40, "k").Source, "C's free unit of x")
			require.Equal(t, SrcFree, admit(b, (x+1)*testWindow, "k").Source, "B's free unit of x+1")
			require.Equal(t, SrcFree, admit(c, (x+1)*testWindow, "k").Source, "C's free unit of x+1")
			t.Logf("at Redis, window x: %+v", readState(t, rdb, a, "k", x))
			assert.Empty(t, judgeMax(truth, testWindow, 10), "the PoPs together stay within the limit")
		})
	}
}

// judgeMax is judge for a limit of max: "" when at every admission the
// sliding estimate of the admissions so far is below max + 1.
func judgeMax(adm []admission, window, maxU int64) string {
	slices.SortStableFunc(adm, func(a, b admission) int { return int(a.at - b.at) })
	var st core.WindowState
	for _, a := range adm {
		idx := floorDiv(a.at, window)
		st.Roll(idx)
		st.Cur += a.n
		est := core.SlidingEstimate(st.Cur, st.Prev, a.at-idx*window, window)
		if !(est < float64(maxU+1)) {
			return fmt.Sprintf("estimate %.3f at %d (window %d, cur %d prev %d) not below %d", est, a.at, idx, st.Cur, st.Prev, maxU+1)
		}
	}
	return ""
}

// TestEarlyFreeOpClaimsTheWrongSlot: two PoPs (P = 2, two units of
// free credit, limit 8). PoP A spends one unit of its free slot of x+2 (a
// request stamped two windows ahead: a full entry, free credit and all,
// forget.go), then a request of A stamped in x asks Redis: its Call
// reports the x+2 op and gives up A's slots of x−1, x and x+1. The
// script counts an op of a window after its own in its own window: C_x
// gets the unit (1) and K_x a claim (a slot of 2), so K_x counts A twice
// and R_x reserves nothing for B. A fills the identity at Redis; B spends
// its two free units of x and two of x+1: the estimate reaches 9.
func TestEarlyFreeOpClaimsTheWrongSlot(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	exec := func(m *Machine, c *Call) (*Result, error) { return Exec(ctx, rdb, m, c, c.Now) }
	mk := func(pop string, inc uint64) *Machine {
		m, err := NewMachine(Config{PoP: pop, Incarnation: inc, Limit: core.PerWindow(8, testWindow*time.Millisecond), PoPs: 2, FreeCredit: 2})
		require.NoError(t, err)
		return m
	}
	a, b := mk("a", 1), mk("b", 2)
	x := int64(77)
	now := x*testWindow + 10
	for _, m := range []*Machine{a, b} {
		takeLease(t, rdb, m, now)
	}
	var truth []admission
	admit := func(m *Machine, at int64, key string, n int64) Decision {
		d, c := m.Request(at, key, n)
		if c != nil {
			r, err := exec(m, c)
			require.NoError(t, err)
			d = m.Complete(at, c, r, err)
		}
		if d.Allowed && key == "k" {
			truth = append(truth, admission{at, n})
		}
		return d
	}
	require.Equal(t, SrcFree, admit(a, (x+2)*testWindow+100, "k", 1).Source, "A's free unit of x+2")
	truth = truth[:0] // not in the windows judged
	for i := range 20 {
		admit(a, now+30+int64(i), "k", 1) // A's requests at Redis fill k in x
	}
	st := readState(t, rdb, a, "k", x)
	t.Logf("at Redis, window x: %+v", st)
	require.Equal(t, SrcFree, admit(b, (x+1)*testWindow-50, "k", 2).Source, "B's free units of x")
	require.Equal(t, SrcFree, admit(b, (x+1)*testWindow, "k", 2).Source, "B's free units of x+1")
	assert.Empty(t, judgeMax(truth, testWindow, 8), "the PoPs together stay within the limit")
}

// TestFarStampKeepsTheDenyCache: after one request of an identity
// stamped far ahead (its reply of that window recorded as Redis' last
// count), a reply in the PoP's own window showing the identity over its
// limit must still set the deny cache.
func TestFarStampKeepsTheDenyCache(t *testing.T) {
	m := newTestMachine(t, func(c *Config) { c.FreeCredit = -1 })
	x := int64(w0 / testWindow)
	m.Tick(w0 + 50)
	far := (x+50)*testWindow + 100
	_, c := m.Request(far, "k", 1)
	require.NotNil(t, c)
	m.Complete(far+5, c, &Result{Now: far + 2, Window: x + 50, Items: []ItemResult{{Allowed: 1, CW: 1, Headroom: 8}}}, nil)
	_, c = m.Request(w0+100, "k", 1)
	require.NotNil(t, c)
	m.Complete(w0+110, c, &Result{Now: w0 + 105, Window: x, Items: []ItemResult{{Allowed: 0, CW: 12, Headroom: 0, Retry: 5000}}}, nil)
	d, _ := m.Request(w0+120, "k", 1)
	assert.Equal(t, SrcDenyCache, d.Source, "C alone is over the limit: denied by the deny cache (deny-until %d)", m.view["k"].denyUntil)
}
