package budget

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const w0 = 1000 * testWindow // the start of window 1000, ms

func newTestMachine(t *testing.T, mod func(*Config)) *Machine {
	t.Helper()
	cfg := Config{PoP: "p", Incarnation: 1, Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2}
	if mod != nil {
		mod(&cfg)
	}
	m, err := NewMachine(cfg)
	require.NoError(t, err, "config %+v is valid", cfg)
	leaseAll(m)
	return m
}

// leaseAll gives m's groups a free-credit lease no test's clock outruns,
// as if Redis had acknowledged its announcements (lease.go): the tests
// that hand m their own Results test everything but the lease.
func leaseAll(m *Machine) {
	for g := range m.groups {
		m.leaseTo(g, math.MinInt64, math.MaxInt64/2)
	}
}

func TestConfigErrors(t *testing.T) {
	base := Config{PoP: "p", Incarnation: 1, Limit: core.PerWindow(10, time.Second), PoPs: 2}
	for name, mod := range map[string]func(*Config){
		"no PoP":                  func(c *Config) { c.PoP = "" },
		"PoP too long":            func(c *Config) { c.PoP = strings.Repeat("p", MaxPoPLen+1) },
		"no PoPs":                 func(c *Config) { c.PoPs = 0 },
		"no limit":                func(c *Config) { c.Limit = core.Limit{} },
		"no incarnation":          func(c *Config) { c.Incarnation = 0 },
		"free credit over limit":  func(c *Config) { c.FreeCredit = 3 }, // 2 × 3 × 2 PoPs > 10
		"negative buckets":        func(c *Config) { c.Buckets = -1 },
		"buckets past int32":      func(c *Config) { c.Buckets = math.MaxInt32 + 1 },
		"limit past MaxLimit":     func(c *Config) { c.Limit = core.PerWindow(MaxLimit+1, time.Second) },
		"free credit overflowing": func(c *Config) { c.FreeCredit = math.MaxInt64 / 2 }, // 2 × c × 2 PoPs wraps negative
		// Redis packs a window's spender count and the largest credit
		// announced in one number: a credit of 2^32 was reserved as
		// 2^32 − 1, and the PoPs together passed the limit
		"free credit past MaxFreeCredit": func(c *Config) { c.Limit = core.PerWindow(MaxLimit, time.Second); c.FreeCredit = MaxFreeCredit + 1 },
		"PoPs past MaxPoPs":              func(c *Config) { c.Limit = core.PerWindow(MaxLimit, time.Second); c.PoPs = MaxPoPs + 1 },
		"window not whole ms":            func(c *Config) { c.Limit = core.PerWindow(10, 1500*time.Microsecond) },
		"groups over buckets":            func(c *Config) { c.Buckets, c.Groups = 4, 5 },
		"groups over default buckets":    func(c *Config) { c.Groups = 1025 },
		"groups over MaxGroups":          func(c *Config) { c.Buckets, c.Groups = MaxGroups+1, MaxGroups+1 },
	} {
		cfg := base
		mod(&cfg)
		_, err := NewMachine(cfg)
		assert.ErrorIs(t, err, ErrConfig, "%s: NewMachine refuses %+v with ErrConfig", name, cfg)
	}
	most := base
	most.Buckets = math.MaxInt32
	_, err := NewMachine(most)
	require.NoError(t, err, "Buckets math.MaxInt32 is valid")
	most = base
	most.Buckets, most.Groups = MaxGroups, MaxGroups
	_, err = NewMachine(most)
	require.NoError(t, err, "Groups MaxGroups is valid")
	most = base
	most.Limit, most.FreeCredit = core.PerWindow(MaxLimit, time.Second), MaxFreeCredit
	_, err = NewMachine(most)
	require.NoError(t, err, "FreeCredit MaxFreeCredit is valid")
	most.FreeCredit, most.PoPs = -1, MaxPoPs
	_, err = NewMachine(most)
	require.NoError(t, err, "PoPs MaxPoPs is valid")
	m, err := NewMachine(base)
	require.NoError(t, err, "the base config is valid")
	c := m.Config()
	assert.Equal(t, AutoFreeCredit(base.Limit, base.PoPs), c.FreeCredit, "FreeCredit 0 is AutoFreeCredit's choice")
	assert.Equal(t, 1024, c.Buckets, "Buckets defaults to 1024")
	assert.Equal(t, 1, c.Groups, "Groups defaults to 1 (New makes it 16 on a Redis Cluster client)")
}

// TestAutoFreeCredit: the zero FreeCredit is 1 unit where its reservation,
// 2 × PoPs units held about 200 ms of a window, is under 1/64 of the limit
// over the window (window × Max ≥ PoPs × 25.6 s) and 2 × PoPs ≤ Max, else
// none; a negative FreeCredit is none, a positive one is kept, and a
// Config with 2 × PoPs over Max is valid with none.
func TestAutoFreeCredit(t *testing.T) {
	for _, tc := range []struct {
		max    int64
		window time.Duration
		pops   int
		want   int64
	}{
		{100, 10 * time.Second, 8, 1},        // the simulator's default
		{100, 10 * time.Second, 32, 1},       // 1,000 s·unit ≥ 819.2
		{24, 10 * time.Second, 8, 1},         // 240 ≥ 204.8
		{16, 10 * time.Second, 8, 0},         // 160 < 204.8
		{100, time.Second, 8, 0},             // 100 < 204.8
		{20, time.Second, 8, 0},              // short window, small limit
		{100, 2048 * time.Millisecond, 8, 1}, // exactly 204.8
		{100, 2047 * time.Millisecond, 8, 0}, // just under
		{10, time.Hour, 8, 0},                // 2 × PoPs over Max, however long the window
		{1, time.Hour, 1, 0},                 // the same with one PoP
		{2, time.Minute, 1, 1},               // one PoP: 2 ≤ 2, 120 ≥ 25.6
		{1_000_000, time.Second, 1000, 1},    // many PoPs, a large limit
	} {
		l := core.PerWindow(tc.max, tc.window)
		assert.Equal(t, tc.want, AutoFreeCredit(l, tc.pops), "AutoFreeCredit(%v, %d PoPs)", l, tc.pops)
		m, err := NewMachine(Config{PoP: "p", Incarnation: 1, Limit: l, PoPs: tc.pops})
		require.NoError(t, err, "%v over %d PoPs is a valid config", l, tc.pops)
		assert.Equal(t, tc.want, m.Config().FreeCredit, "the zero FreeCredit resolves to AutoFreeCredit's")
	}
	l := core.PerWindow(100, 10*time.Second)
	for set, want := range map[int64]int64{-1: 0, -7: 0, 2: 2, 50: 50} {
		m, err := NewMachine(Config{PoP: "p", Incarnation: 1, Limit: l, PoPs: 1, FreeCredit: set})
		require.NoError(t, err, "FreeCredit %d is valid", set)
		assert.Equal(t, want, m.Config().FreeCredit, "FreeCredit %d resolves to %d", set, want)
	}
	_, err := NewMachine(Config{PoP: "p", Incarnation: 1, Limit: l, PoPs: 1, FreeCredit: 51})
	assert.ErrorIs(t, err, ErrConfig, "2 × 51 × 1 PoP over 100 is refused")
}

// TestNoFreeCredit: without free credit the first unit of an identity asks
// Redis (a decision Call carrying no slot claims and no report), the
// light tier keeps nothing, and a Sync's item claims no slot.
func TestNoFreeCredit(t *testing.T) {
	m := newTestMachine(t, func(c *Config) { c.FreeCredit = -1 })
	d, c := m.Request(w0+10, "a", 1)
	require.NotNil(t, c, "the first unit asks Redis: no free credit covers it")
	assert.Equal(t, Decision{}, d, "undecided until Redis answers")
	require.Len(t, c.Items, 1, "one item")
	assert.Empty(t, c.Items[0].Claims, "no slot to give up")
	assert.Empty(t, c.guard, "nothing to report: no sequence number taken")
	assert.Zero(t, m.lightLen(), "no light record")
	r := &Result{Now: w0 + 20, Window: 1000, Items: []ItemResult{{Allowed: 1, Grant: 2, CW: 1, Headroom: 1}}}
	d = m.Complete(w0+30, c, r, nil)
	assert.Equal(t, Decision{Allowed: true, Source: SrcRedis}, d, "Redis admits it")
	d, c = m.Request(w0+40, "a", 1)
	assert.Nil(t, c, "the grant covers the next unit")
	assert.Equal(t, Decision{Allowed: true, Source: SrcGrant}, d, "from the grant")
	batches := m.Tick(w0 + 100) // contested (headroom 1) with demand: planned
	require.NotEmpty(t, batches, "a Sync batch about the contested identity")
	for _, b := range batches {
		require.NotEmpty(t, b.Items, "with its item")
		for _, it := range b.Items {
			assert.Empty(t, it.Claims, "a Sync item claims no slot without free credit")
		}
	}
}

// TestFreeCreditThenRedis: the first unit of a window is free, the second
// asks Redis with a Call that gives up the previous window's unused slot
// (guarded by its own sequence number); Redis' verdict and grant are
// applied, the grant serves the next request, and the next window's first
// unit is free again: an identity Redis did not call contested keeps its
// free credit in every window. The second unit comes 190 ms after the
// first, so the identity is settled: its Call asks a grant and gives up
// no slot ahead (TestNewIdentityGivesUpAhead has the first 150 ms).
// Caught mutation: a settled identity's decision Call giving up the next
// two windows' slots (the next window's first unit asks Redis).
func TestFreeCreditThenRedis(t *testing.T) {
	m := newTestMachine(t, nil)
	d, c := m.Request(w0+10, "a", 1)
	assert.Equal(t, Decision{Allowed: true, Source: SrcFree}, d, "the first unit of a window is free credit")
	assert.Nil(t, c, "free credit asks nothing")
	d, c = m.Request(w0+200, "a", 1)
	require.NotNil(t, c, "the second unit of the window has no budget: a decision Call")
	assert.Equal(t, Decision{}, d, "no verdict while the Call is out")
	assert.True(t, c.Decision(), "a decision Call")
	assert.Equal(t, uint64(1), c.Seq, "the first decision Call carrying claims: sequence 1 of its guard")
	it := c.Items[0]
	assert.Equal(t, int64(1), it.N, "the Call decides the request's units")
	assert.Equal(t, []int64{999}, it.Claims, "the Call gives up the previous window's unused slot, none ahead (1000's is claimed by its free unit's op)")
	assert.Positive(t, it.Want, "the Call asks a grant for the demand")
	d = m.Complete(w0+260, c, &Result{Now: w0 + 240, Window: 1000, Items: []ItemResult{{Allowed: 1, Grant: 3, CW: 1, Headroom: 5}}}, nil)
	assert.Equal(t, Decision{Allowed: true, Source: SrcRedis}, d, "Redis' verdict")
	for i := range 3 {
		d, c = m.Request(w0+300+int64(i), "a", 1)
		assert.Equal(t, Decision{Allowed: true, Source: SrcGrant}, d, "unit %d of the grant of 3", i+1)
		assert.Nil(t, c)
	}
	_, c = m.Request(w0+400, "a", 1)
	assert.NotNil(t, c, "the grant spent, Redis is asked again")
	assert.Equal(t, uint64(2), c.Seq, "the Call reports the grant's spends: the guard's next number")
	assert.Equal(t, []Op{{X: 1000, GW: 1000, U: 3}}, c.Items[0].Ops, "the grant's three units, spent, reported with the Call")
	assert.Empty(t, c.Items[0].Claims, "nothing left to give up")
	m.Complete(w0+440, c, &Result{Now: w0 + 420, Window: 1000, Items: []ItemResult{{Allowed: 0, CW: 2, Headroom: 4}}}, nil)
	d, c = m.Request(w0+testWindow+5, "a", 1)
	assert.Nil(t, c, "the next window's slot was kept: its first unit is free")
	assert.Equal(t, Decision{Allowed: true, Source: SrcFree}, d)
}

// TestReportWindow: decision Calls carrying reports are numbered in their
// own sequence, at most reportWindow outstanding: with the oldest still in
// flight the next Call carries none (a number below Redis' window would be
// refused); once the oldest completes, the next carries its report with
// the next number; a failed one's report, waiting to be sent again, holds
// the window as the Call did. A mutation numbering past the window, or
// not holding it for a report to send again, fails here.
func TestReportWindow(t *testing.T) {
	m := newTestMachine(t, nil)
	var calls []*Call
	for i := range reportWindow + 1 {
		k := fmt.Sprintf("k%d", i)
		m.Request(w0, k, 1) // free credit
		_, c := m.Request(w0+1, k, 1)
		require.NotNil(t, c)
		calls = append(calls, c)
	}
	for i, c := range calls[:reportWindow] {
		assert.Equal(t, uint64(i+1), c.Seq, "Call %d carries a report, numbered in order", i)
		assert.NotEmpty(t, c.Items[0].Ops, "Call %d reports its free unit", i)
	}
	last := calls[reportWindow]
	assert.Zero(t, last.Seq, "the window is full: no number")
	assert.Empty(t, last.Items[0].Ops, "and no report")
	ok := &Result{Now: w0 + 1, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: 2, Headroom: 8}}}
	m.Complete(w0+2, calls[0], nil, errors.New("reply lost"))
	m.Complete(w0+2, calls[1], ok, nil) // Redis answers again: not down
	m.Request(w0, "late", 1)
	_, c := m.Request(w0+3, "late", 1)
	require.NotNil(t, c)
	assert.Zero(t, c.Seq, "the lost reply's report waits to be sent again: the window is still full")
	redo := m.Tick(w0 + 4)
	require.NotEmpty(t, redo)
	require.True(t, redo[0].redo, "Tick sends the report again first")
	assert.Equal(t, uint64(1), redo[0].Seq, "under its number")
	m.Finish(redo[0], ok, nil)
	m.Request(w0, "later", 1)
	_, c = m.Request(w0+5, "later", 1)
	require.NotNil(t, c)
	assert.Equal(t, uint64(reportWindow+1), c.Seq, "the oldest resolved: the next Call reports, with the next number")
}

// TestSlotPaysPartOfALargerRequest: a request of more units than the free
// credit, its slot unused, takes the slot and asks Redis for the rest;
// admitted, the slot is reported used (an op of its units), denied, given
// up unused (an op of 0 units that claims it); a failed Call gives it up
// too. A mutation that asks Redis for every unit, or keeps the slot on a
// denial, fails here.
func TestSlotPaysPartOfALargerRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *Result
		err  error
		u    int64
	}{
		{"admitted", &Result{Now: w0 + 1, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: 3, Headroom: 4}}}, nil, 1},
		{"denied", &Result{Now: w0 + 1, Window: 1000, Items: []ItemResult{{Allowed: 0, CW: 0, Headroom: 2, Retry: 50}}}, nil, 0},
		{"failed", nil, errors.New("down"), 0},
	} {
		m := newTestMachine(t, nil)
		_, c := m.Request(w0, "k", 4)
		require.NotNil(t, c, "%s: 4 units are more than the free credit", tc.name)
		assert.Equal(t, int64(3), c.Items[0].N, "%s: the slot pays 1 unit, Redis decides 3", tc.name)
		m.Complete(w0+2, c, tc.r, tc.err)
		e := m.view["k"]
		var free []Op
		for _, o := range e.pending() {
			if o.GW == GWFree {
				free = append(free, o)
			}
		}
		assert.Equal(t, []Op{{X: 1000, GW: GWFree, U: tc.u}}, free, "%s: the slot's op", tc.name)
		if tc.err == nil {
			_, c = m.Request(w0+3, "k", 1)
			assert.NotNil(t, c, "%s: the slot is taken either way: the next unit asks Redis", tc.name)
		}
	}
}

// TestGrantLifetime: a grant of window gw serves requests of gw and gw+1,
// not gw+2.
func TestGrantLifetime(t *testing.T) {
	m := newTestMachine(t, nil)
	m.Request(w0, "g", 1) // free
	_, c := m.Request(w0+1, "g", 1)
	require.NotNil(t, c)
	m.Complete(w0+2, c, &Result{Now: w0 + 1, Window: 1000, Items: []ItemResult{{Allowed: 1, Grant: 5, Headroom: 9}}}, nil)
	d, _ := m.Request(w0+testWindow+1, "g", 1)
	assert.Equal(t, SrcGrant, d.Source, "a grant of window w serves window w+1")
	d, c = m.Request(w0+2*testWindow+1, "g", 1)
	assert.NotEqual(t, SrcGrant, d.Source, "a grant of window w does not serve window w+2")
	assert.NotEqual(t, SrcFree, d.Source, "the decision Call in w gave up w+2's slot")
	assert.NotNil(t, c, "window w+2 asks Redis")
}

// TestDenyCache: a reply whose C alone denies sets deny-until at
// core.SlidingRetryMillis; requests before it are denied without a Call.
func TestDenyCache(t *testing.T) {
	m := newTestMachine(t, nil)
	m.Request(w0, "d", 1)
	now := int64(w0 + 2000)
	_, c := m.Request(now, "d", 1)
	require.NotNil(t, c)
	m.Complete(now, c, &Result{Now: now, Window: 1000, Items: []ItemResult{{Allowed: 0, CW: 6, CPrev: 8, Headroom: 3}}}, nil)
	retry := core.SlidingRetryMillis(6, 8, 2000, testWindow, 10, 1)
	require.Positive(t, retry, "C alone denies: 6 + 8 × 0.8 ≥ 10")
	d, c := m.Request(now+retry-1, "d", 1)
	assert.Equal(t, Decision{Source: SrcDenyCache}, d, "denied from the cache %d ms before deny-until", 1)
	assert.Nil(t, c)
	_, c = m.Request(now+retry, "d", 1)
	assert.NotNil(t, c, "at deny-until Redis is asked again")
}

// TestSyncPlan: a calm identity's one request costs no Sync item; once
// Redis calls it contested, a Tick reports its spends and claims and asks
// its top-up, sends a failed batch again with its sequence number, and
// returns the balance of an identity without demand.
func TestSyncPlan(t *testing.T) {
	m := newTestMachine(t, func(c *Config) { c.Groups = 1 })
	m.Request(w0+5, "s", 1) // free
	assert.Empty(t, m.Tick(w0+100), "a calm identity's one request asks nothing and reports nothing (its free unit is inside R at Redis)")
	_, c := m.Request(w0+160, "s", 1)
	require.NotNil(t, c, "the free credit is spent: Redis decides")
	assert.Positive(t, c.Items[0].Want, "a request the budget could not cover asks a top-up (seen 155 ms: settled)")
	assert.Equal(t, []int64{999}, c.Items[0].Claims, "the decision Call gives up the past window's unused slot, none ahead: settled, not known contested (w's is claimed by the op of its free unit)")
	assert.Equal(t, []Op{{X: 1000, GW: GWFree, U: 1}}, c.Items[0].Ops, "and reports the free unit in its window (it claims slot w)")
	m.Complete(w0+170, c, &Result{Now: w0 + 170, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: 2, Headroom: 1}}}, nil)
	calls := m.Tick(w0 + 200)
	require.Len(t, calls, 1, "one group, one batch")
	b := calls[0]
	assert.Equal(t, uint64(1), b.Seq, "the first batch of the group")
	require.Len(t, b.Items, 1)
	assert.Empty(t, b.Items[0].Ops, "the decision Call reported the free unit already")
	assert.Equal(t, []int64{1001, 1002}, b.Items[0].Claims, "called contested by the reply: the next two windows' slots are given up")
	assert.Positive(t, b.Items[0].Want, "contested with demand: the top-up is asked")
	assert.Empty(t, m.Tick(w0+250), "no new batch while the group's is in flight")
	m.Finish(b, nil, errors.New("lost"))
	again := m.Tick(w0 + 300)
	require.Len(t, again, 1)
	assert.Same(t, b, again[0], "a failed batch is sent again as it was")
	m.Finish(b, &Result{Now: w0 + 300, Window: 1000, Items: []ItemResult{{Allowed: -1, Grant: 2, CW: 1, Headroom: 1}}}, nil)
	// Contested (headroom 1 < Max/4) and no demand since the batch was
	// planned: the next Sync keeps the one unit its demand rate expects
	// (1 per window) and returns the other.
	next := m.Tick(w0 + 400)
	require.Len(t, next, 1)
	assert.Equal(t, uint64(2), next[0].Seq)
	assert.Equal(t, []Op{{X: -1, GW: 1000, U: 1}}, next[0].Items[0].Ops, "the unused grant beyond the expected demand returned")
	assert.Zero(t, next[0].Items[0].Want, "no demand, no top-up")
}

// admittedWhileDown makes n one-unit requests of key, one a ms from from
// on, each decision Call refused (Redis down), and returns how many were
// admitted.
func admittedWhileDown(m *Machine, key string, from int64, n int) int {
	admitted := 0
	for i := range n {
		d, c := m.Request(from+int64(i), key, 1)
		if c != nil {
			d = m.Complete(from+int64(i), c, nil, errors.New("refused"))
		}
		if d.Allowed {
			admitted++
		}
	}
	return admitted
}

// TestOutageFallback: with Redis down one PoP admits at most Max units of
// an identity per window, counting each admission; FailClosed denies.
func TestOutageFallback(t *testing.T) {
	m := newTestMachine(t, nil)
	admitted := admittedWhileDown(m, "o", w0, 30)
	assert.Equal(t, 10, admitted, "Max units of the window while Redis is down")
	mc := newTestMachine(t, func(c *Config) { c.FailClosed = true })
	_, c := mc.Request(w0, "o", 1) // free
	assert.Nil(t, c)
	_, c = mc.Request(w0+1, "o", 1)
	require.NotNil(t, c)
	d := mc.Complete(w0+2, c, nil, errors.New("refused"))
	assert.Equal(t, Decision{Source: SrcFallback}, d, "FailClosed denies what the budget cannot cover")
}

// TestOutageAfterAFullWindow: an identity one PoP served at its limit in
// window 1000, every unit reported, meets an outage halfway through window
// 1001: the fallback admits what the sliding rule leaves (half the
// previous window's weight gone: 5 of 10), counting each unit Redis knows
// once. Adding all of this PoP's own admissions to C (the reported ones
// counted twice) admits one.
func TestOutageAfterAFullWindow(t *testing.T) {
	m := newTestMachine(t, func(c *Config) { c.PoPs = 1 })
	var c *Call
	for i := range 10 {
		var d Decision
		d, c = m.Request(w0+int64(i), "f", 1)
		if c != nil {
			d = m.Complete(w0+int64(i), c, &Result{Now: w0 + int64(i), Window: 1000, Items: []ItemResult{{Allowed: 1, CW: int64(i), Headroom: 10 - int64(i)}}}, nil)
		}
		require.True(t, d.Allowed, "unit %d of 10 in window 1000", i+1)
	}
	// the Sync reports the free unit; Redis now counts all ten
	for _, b := range m.Tick(w0 + 100) {
		items := make([]ItemResult, len(b.Items))
		for i := range items {
			items[i] = ItemResult{Allowed: -1, CW: 10, Headroom: 0, Retry: testWindow}
		}
		m.Finish(b, &Result{Now: w0 + 101, Window: 1000, Items: items}, nil)
	}
	half := int64(w0 + testWindow + testWindow/2)
	admitted := admittedWhileDown(m, "f", half, 20)
	assert.Equal(t, 5, admitted, "half way through the next window, Redis down: the sliding rule leaves 5 of 10")
}

// TestOutageShare: during an outage an identity whose units Redis knows
// came from other PoPs too is admitted here only within this PoP's share
// of what Redis had accounted for at its last word (its reported units
// against C, or against Max less the headroom when grants and reserved
// slots held more: 2 of 8 is a quarter of the limit, 2 of 20 a tenth, 2
// of 8 counted with 32 more held elsewhere a twentieth), while one this
// PoP alone serves keeps the whole limit less what Redis counted: P PoPs
// falling back at once then admit about the limit between them, in
// proportion to what each served, not P times it. With an equal share
// (Max/P) a PoP serving two of eight units got a quarter here too, but
// one serving half of an identity two PoPs share was denied the whole
// outage; with this PoP's unreported units in its share, a burst's PoPs
// held more than the limit between them (their shares summed past 1);
// against C alone, a PoP whose last reply came early in a burst (C 30,
// 99 by the outage) took a third of the limit (a burst at 1.30× under a
// 5 s outage, 1.18× against Max less the headroom).
func TestOutageShare(t *testing.T) {
	cfg := func(c *Config) { c.Limit = core.PerWindow(40, testWindow*time.Millisecond); c.PoPs = 4 }
	for name, tc := range map[string]struct {
		cw, headroom, admitted int64
		unreported             bool // the free unit is not reported before the outage
	}{
		"a quarter here":      {cw: 8, headroom: 32, admitted: 40 / 4},                   // 2 of the 8 units Redis counted came from here
		"a tenth here":        {cw: 20, headroom: 20, admitted: 40 / 10},                 // 2 of 20
		"held elsewhere":      {cw: 8, headroom: 0, admitted: 40 / 20},                   // 2 of 8 counted, 32 more granted or reserved: 2 of 40
		"this PoP's alone":    {cw: 2, headroom: 5, admitted: 40},                        // every unit Redis counted came from here: C + unreported = the truth, so exactly Max
		"unreported no share": {cw: 8, headroom: 32, admitted: 40 / 8, unreported: true}, // 1 of 8 reported: an eighth
	} {
		t.Run(name, func(t *testing.T) {
			m := newTestMachine(t, cfg)
			if tc.unreported {
				// other identities' decision Calls fill the report
				// window, so the free unit does not go with s's Call
				for i := range reportWindow {
					o := fmt.Sprintf("o%d", i)
					m.Request(w0, o, 1)
					_, busy := m.Request(w0, o, 1)
					require.NotNil(t, busy)
					require.NotZero(t, busy.Seq, "%s's Call carries a report", o)
				}
			}
			m.Request(w0, "s", 1) // free credit: one unit here
			_, c := m.Request(w0+1, "s", 1)
			require.NotNil(t, c)
			if tc.unreported {
				require.Empty(t, c.Items[0].Ops, "s's Call carries no report")
				m.Complete(w0+2, c, &Result{Now: w0 + 2, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: tc.cw, Headroom: tc.headroom}}}, nil)
			} else {
				require.NotEmpty(t, c.Items[0].Ops, "s's Call reports the free unit")
				m.Complete(w0+2, c, &Result{Now: w0 + 2, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: tc.cw, Headroom: tc.headroom}}}, nil)
			}
			admitted := 2 + int64(admittedWhileDown(m, "s", w0+10, 100))
			assert.Equal(t, tc.admitted, admitted, "units admitted here in the window, the outage's included")
		})
	}
}

// TestContested: a request the budget cannot cover goes to Redis while
// Redis has headroom, however little (a denial here would be a guess);
// once a reply leaves no headroom with C alone filling the limit, a
// greedy identity is denied here (SrcFull) and no Sync asks a grant until
// max(the reply's retry, refill) has passed; then it goes to Redis again.
func TestContested(t *testing.T) {
	m := newTestMachine(t, nil)
	m.Request(w0, "h", 1) // free
	_, c := m.Request(w0+1, "h", 1)
	require.NotNil(t, c, "nothing known yet: Redis is asked")
	m.Complete(w0+2, c, &Result{Now: w0 + 2, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: 2, Headroom: 1}}}, nil)
	_, c = m.Request(w0+3, "h", 1)
	require.NotNil(t, c, "contested but with headroom: Redis decides")
	const retry = 7
	m.Complete(w0+4, c, &Result{Now: w0 + 4, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: 9, Headroom: 0, Retry: retry}}}, nil)
	until := m.view["h"].fullUntil
	require.GreaterOrEqual(t, until, int64(w0+4+retry), "known full: the wait is at least the retry")
	require.Less(t, until, w0+4+retry+m.refill(), "and less than the retry plus refill()")
	d, c := m.Request(until-1, "h", 1)
	assert.Nil(t, c, "known full: no Call")
	assert.Equal(t, Decision{Source: SrcFull}, d, "known full: denied here until the wait ends")
	for _, call := range m.Tick(until - 1) {
		for _, it := range call.Items {
			if it.Key == "h" {
				assert.Zero(t, it.Want, "known full: the Sync asks no grant before the wait ends")
			}
		}
	}
	_, c = m.Request(until, "h", 1)
	assert.NotNil(t, c, "after the wait: Redis decides again")
}

// TestFullBackoff: after a reply that leaves no headroom, a PoP waits
// before asking Redis again: only the reply's retry where the identity is
// sparse (its next request may well be admitted there); the retry plus a
// draw from [0, refill()) where it
// asks more than twice its share of the limit's rate and the admissions
// Redis knows of (C alone) fill the limit, since each unit the limit frees
// then has many requests competing for it; at most a Sync interval when
// what fills the limit is budget held by other PoPs (it returns within a
// Sync or two), however long the retry.
func TestFullBackoff(t *testing.T) {
	full := func(m *Machine, at int64, key string, cw, retry int64) {
		t.Helper()
		_, c := m.Request(at, key, 1)
		require.NotNil(t, c, "%s at %d: the budget cannot cover it, Redis is asked", key, at)
		m.Complete(at+1, c, &Result{Now: at + 1, Window: 1000, Items: []ItemResult{{Allowed: 0, CW: cw, Headroom: 0, Retry: retry}}}, nil)
	}
	greedy := func(m *Machine, key string) {
		m.Request(w0, key, 1) // free credit
		m.Request(w0+1, key, 1)
		m.Request(w0+2, key, 1)
	}
	t.Run("sparse", func(t *testing.T) {
		m := newTestMachine(t, nil)
		m.Request(w0, "s", 1) // free credit
		m.Tick(w0 + 1)        // the Sync resets the demand: one request since says nothing of a rate
		full(m, w0+2, "s", 9, 7)
		_, c := m.Request(w0+3+7, "s", 1)
		assert.NotNil(t, c, "a sparse identity asks Redis again once the retry has passed")
	})
	t.Run("greedy", func(t *testing.T) {
		m := newTestMachine(t, nil)
		greedy(m, "g")
		full(m, w0+3, "g", 9, 7) // C = 9 of 10: the limit itself denies
		until := m.view["g"].fullUntil
		assert.Equal(t, w0+3+7+spread("g", "p", w0+4, m.refill()), until, "a greedy identity waits the retry plus a draw from [0, refill()), from when its call went out")
		d, c := m.Request(until-1, "g", 1)
		assert.Nil(t, c, "no Call during the wait")
		assert.Equal(t, Decision{Source: SrcFull}, d)
	})
	t.Run("held elsewhere", func(t *testing.T) {
		m := newTestMachine(t, nil)
		greedy(m, "h")
		retry := 50 * m.Config().SyncInterval.Milliseconds()
		full(m, w0+3, "h", 3, retry) // C = 3 of 10: budget held elsewhere fills it
		at := w0 + 4 + m.Config().SyncInterval.Milliseconds()
		_, c := m.Request(at, "h", 1)
		assert.NotNil(t, c, "budget held elsewhere: Redis is asked again after a Sync interval, not the retry")
	})
}

// TestNoWait: under Config.NoWait a contested identity's request no grant
// or free credit covers is denied here (SrcFull), with Redis still
// reporting headroom, once the units the view knows were admitted of it
// reach 3/8 of the limit (heavy), and the next Sync asks a grant for it;
// below that, and by default, the same request goes to Redis. The view's
// units come from Redis' count of this window, or of the window before
// under the sliding weight, or this PoP's own count where larger. A
// mutation dropping the heavy test fails the cases under it; one denying
// whatever the count, or never, or reading the window before at no
// weight, or this PoP's own count not at all, fails one of the others.
func TestNoWait(t *testing.T) {
	for _, tc := range []struct {
		cw, cprev int64 // Redis' C of this window after the units it counted, and of the window before
		extra     int64 // units this PoP admits at Redis after that reply, with Redis' count unchanged
		heavy     bool  // of a limit of 10, the sliding estimate reaches 3.75
	}{
		{cw: 3},
		{cw: 4, heavy: true},
		{cw: 2, cprev: 2, heavy: true}, // 2 + 2 × (1 − 3/1000)
		{cw: 2, extra: 2, heavy: true}, // this PoP's own 4 units
	} {
		for _, noWait := range []bool{false, true} {
			name := fmt.Sprintf("C %d, C before %d, %d more here, NoWait %v", tc.cw, tc.cprev, tc.extra, noWait)
			m := newTestMachine(t, func(c *Config) { c.NoWait = noWait })
			m.Request(w0, "h", 1) // free credit
			_, c := m.Request(w0+1, "h", 1)
			require.NotNil(t, c, "%s: nothing known yet: Redis is asked", name)
			res := &Result{Now: w0 + 2, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: tc.cw, CPrev: tc.cprev, Headroom: 1}}}
			m.Complete(w0+2, c, res, nil)
			for range tc.extra {
				_, c := m.Request(w0+2, "h", 1)
				require.NotNil(t, c, "%s: not heavy yet: Redis is asked", name)
				m.Complete(w0+2, c, res, nil)
			}
			require.Equal(t, tc.heavy, m.heavy(m.view["h"], w0+3, 1000), "%s: heavy", name)
			d, c := m.Request(w0+3, "h", 1)
			if !noWait || !tc.heavy {
				assert.NotNil(t, c, "%s: a contested identity with headroom at Redis is decided there", name)
				continue
			}
			assert.Nil(t, c, "%s: no Call", name)
			assert.Equal(t, Decision{Source: SrcFull}, d, "%s: a heavy contested request the budget cannot cover is denied here", name)
			calls := m.Tick(w0 + 100)
			require.Len(t, calls, 1, "%s: the Sync carries the identity", name)
			require.Len(t, calls[0].Items, 1)
			assert.Positive(t, calls[0].Items[0].Want, "%s: the Sync asks a grant for the denied demand", name)
		}
	}
}

// TestNewIdentityAsksNoTopUp: a decision Call about an identity this PoP
// first saw less than a Sync interval and a round trip ago (150 ms at the
// defaults) asks no grant, so a burst's Calls hold no budget that would
// land after it; from then on a Call asks its top-up.
func TestNewIdentityAsksNoTopUp(t *testing.T) {
	// from w0, and from time 0 (a first sight at 0 ms is a first sight)
	for _, start := range []int64{w0, 0} {
		m := newTestMachine(t, nil)
		m.Request(start, "n", 1) // free credit: seen from start
		settle := (m.cfg.SyncInterval + m.cfg.RTT).Milliseconds()
		require.Equal(t, int64(150), settle, "a Sync interval and a round trip at the defaults")
		ask := func(at int64) *Call {
			t.Helper()
			_, c := m.Request(at, "n", 1)
			require.NotNil(t, c, "at %d: a decision Call", at)
			m.Complete(at, c, &Result{Now: at, Window: start / testWindow, Items: []ItemResult{{Allowed: 1, CW: 2, Headroom: 50}}}, nil)
			return c
		}
		assert.Zero(t, ask(start + 1).Items[0].Want, "from %d, seen 1 ms: no top-up", start)
		assert.Zero(t, ask(start + settle - 1).Items[0].Want, "from %d, seen 149 ms: no top-up", start)
		assert.Positive(t, ask(start + settle).Items[0].Want, "from %d, seen 150 ms: the Call asks its top-up", start)
	}
}

// TestOneTopUpInFlight: while a decision Call about an identity is in
// flight, a second request's Call decides its unit but asks no grant:
// the replies of a burst land after it, and a grant in each would hold
// budget where no request comes.
func TestOneTopUpInFlight(t *testing.T) {
	m := newTestMachine(t, nil)
	m.Request(w0-200, "b", 1) // free credit of the window before: seen 200 ms, settled
	m.Request(w0, "b", 1)     // free credit
	_, first := m.Request(w0+1, "b", 1)
	_, second := m.Request(w0+2, "b", 1)
	require.NotNil(t, first, "the budget cannot cover the second unit: Redis is asked")
	require.NotNil(t, second, "nor the third")
	assert.Positive(t, first.Items[0].Want, "the first Call tops up the grant")
	assert.Zero(t, second.Items[0].Want, "a Call while another is in flight asks no grant")
	m.Complete(w0+3, first, &Result{Now: w0 + 3, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: 2, Headroom: 8}}}, nil)
	m.Complete(w0+3, second, &Result{Now: w0 + 3, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: 3, Headroom: 7}}}, nil)
	_, third := m.Request(w0+4, "b", 1)
	require.NotNil(t, third)
	assert.Positive(t, third.Items[0].Want, "with nothing in flight the next Call tops up again")
}

// TestFloodingDeniedWhileAsking: while a decision Call about an identity
// is in flight from this PoP, its next request the budget cannot cover is
// denied here (SrcFull, no Call) when it floods: contested, and its
// demand, this PoP's rate scaled by its part of what Redis counted,
// reaches twice the limit. A client near its limit, an identity with
// headroom, and a flooding one with nothing in flight are each decided at
// Redis. The test drives the rate through requests and a Tick. It
// catches the rule without the Call in flight (the last case fails),
// without the contested test (the third), without the rate test (the
// first case's second Call is denied), and a rate not scaled by this
// PoP's part (this PoP served 2 of Redis' 8 units: unscaled, the first
// case's demand reads 12 units a window, under twice the limit of 10).
func TestFloodingDeniedWhileAsking(t *testing.T) {
	for _, tc := range []struct {
		name     string
		headroom int64 // Redis' headroom in its reply (contested under 10/4)
		inflight int   // decision Calls sent before the Tick and still out
		settle   bool  // their replies come before the request
		wantCall bool
	}{
		{name: "flooding, a Call in flight", headroom: 1, inflight: 10},
		{name: "near its limit, a Call in flight", headroom: 1, inflight: 1, wantCall: true},
		{name: "flooding demand, headroom left", headroom: 5, inflight: 10, wantCall: true},
		{name: "flooding, nothing in flight", headroom: 1, inflight: 10, settle: true, wantCall: true},
	} {
		m := newTestMachine(t, nil) // 10 per window, 2 PoPs
		m.Request(w0, "f", 1)       // free credit
		_, c := m.Request(w0+1, "f", 1)
		require.NotNil(t, c, "%s: Redis is asked", tc.name)
		m.Complete(w0+2, c, &Result{Now: w0 + 2, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: 8, Headroom: tc.headroom}}}, nil)
		e := m.view["f"]
		mine, counted := m.part(e)
		require.Equal(t, [2]int64{2, 8}, [2]int64{mine, counted}, "%s: this PoP reported 2 of Redis' 8 units", tc.name)
		var out []*Call
		for i := range tc.inflight {
			_, c := m.Request(w0+3+int64(i), "f", 1)
			require.NotNil(t, c, "%s: request %d: no rate known yet, Redis is asked", tc.name, i)
			out = append(out, c)
		}
		m.Tick(w0 + 100) // the demand becomes a rate
		if tc.settle {
			for _, c := range out {
				m.Complete(w0+101, c, &Result{Now: w0 + 101, Window: 1000, Items: []ItemResult{{Allowed: 0, CW: 8, Headroom: tc.headroom}}}, nil)
			}
		}
		d, c := m.Request(w0+102, "f", 1)
		if tc.wantCall {
			assert.NotNil(t, c, "%s: decided at Redis", tc.name)
			continue
		}
		assert.Nil(t, c, "%s: no Call", tc.name)
		assert.Equal(t, Decision{Source: SrcFull}, d, "%s: denied here", tc.name)
	}
}

// TestDecisionCarriesItsAge: a decision Call carries this PoP's estimate
// of the one-way delay to Redis, half its decision Calls' round trips
// averaged with weight 1/8 for the newest: none before a reply came back,
// 40 ms after one of 80 ms, 45 ms after one of 160 ms more; a Call
// without a reply (its caller left) teaches nothing; a slow reply counts
// as twice the average, and a first one at most the expected one-way
// delay (half Config.RTT); an expected round trip under 2 ms still lets
// the age grow from 1 ms; an identity greedy here (asking over twice its
// share) is decided at Redis' now. It catches the age left out of the
// Call, a round trip not halved, an average that keeps the first sample
// or takes the last, a Call without a reply counted as a sample, a
// sample or a first sample uncapped, the 1 ms floor left out (or
// Config.RTT rounded down to whole ms, which stuck the age at 0), and
// greedy identities aged.
func TestDecisionCarriesItsAge(t *testing.T) {
	// 10 per window, 2 PoPs; an expected round trip of 100 ms, so no
	// sample below is capped but the slow one
	m := newTestMachine(t, func(c *Config) { c.RTT = 100 * time.Millisecond })
	ask := func(at int64, key string) *Call {
		t.Helper()
		m.Request(at, key, 1) // its free credit
		_, c := m.Request(at+1, key, 1)
		require.NotNil(t, c, "%s: Redis is asked", key)
		return c
	}
	reply := func(at int64) *Result {
		return &Result{Now: at, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: 2, Headroom: 8}}}
	}
	c := ask(w0, "a")
	assert.Zero(t, c.age, "no reply yet: decided at Redis' now")
	m.Complete(w0+1+80, c, reply(w0+41), nil)
	c = ask(w0+200, "b")
	assert.EqualValues(t, 40, c.age, "half of the one round trip seen")
	m.Complete(w0+201+160, c, reply(w0+281), nil)
	c = ask(w0+400, "c")
	assert.EqualValues(t, 45, c.age, "40 + (80 − 40) / 8")
	m.Complete(w0+401+1000, c, nil, &CanceledError{Op: "budget script", Err: context.Canceled}) // its caller left
	c = ask(w0+1500, "d")
	assert.EqualValues(t, 45, c.age, "a Call without a reply is no sample")
	m.Complete(w0+1501+1000, c, reply(w0+1546), nil) // a slow reply: half of it, 500, counts as twice the average
	c = ask(w0+2600, "e")
	assert.EqualValues(t, 50, c.age, "45 + (2 × 45 − 45) / 8 = 50.6")
	m.Complete(w0+2601+90, c, reply(w0+2646), nil)

	g := m.entry("g")
	g.rate = 2 * 10 / float64(2*testWindow) // twice the share of 2 PoPs, in units a ms
	require.True(t, m.greedy(g), "g asks twice its share here")
	c = ask(w0+2800, "g")
	assert.Zero(t, c.age, "a greedy identity is decided at Redis' now")

	// a first reply that took several round trips (a dial, a NOSCRIPT's
	// second trip) counts at most the expected one-way delay, half the
	// default 50 ms round trip
	m = newTestMachine(t, nil)
	c = ask(w0, "a")
	m.Complete(w0+1+2000, c, reply(w0+1000), nil)
	c = ask(w0+2100, "b")
	assert.EqualValues(t, 25, c.age, "the first sample capped at Config.RTT / 2")

	// an expected round trip under 2 ms still lets the age grow, from 1 ms,
	// at most an eighth a Call: 20 ms one-way for 21 Calls reads 1 × (9/8)^20
	m = newTestMachine(t, func(c *Config) { c.RTT = 500 * time.Microsecond })
	for i := range 21 {
		at := w0 + int64(i)*100
		c = ask(at, fmt.Sprint("r", i))
		m.Complete(at+1+40, c, reply(at+21), nil)
	}
	c = ask(w0+2200, "s")
	assert.EqualValues(t, 10, c.age, "1.125^20 = 10.5: the age grows from the 1 ms floor")
}

// TestFloodingReadsDemand: the flood test's reading of an identity's
// demand, on contested entries set by hand: this PoP's rate
// over its part of Redis' count of the last two windows. An identity
// served here alone at 1.1 of its limit is no flood; one this PoP serves
// half of, asking here at 0.6 of the limit a window (1.2 in all), is
// none; at 1.1 here (2.2 in all), it is. Scaling this PoP's rate by P
// instead of its part fails the first case, reading it unscaled the
// last, a flood from once the limit the first and third.
func TestFloodingReadsDemand(t *testing.T) {
	for _, tc := range []struct {
		name          string
		lowC, lowPrev int64
		own           core.WindowState
		rate          float64 // units asked here a window
		mine, counted int64
		flooding      bool
	}{
		{name: "in step, served here alone", lowC: 5, lowPrev: 5, own: core.WindowState{Index: 1000, Cur: 5, Prev: 5}, rate: 11, mine: 10, counted: 10},
		{name: "half here, at 1.2 times the limit", lowC: 8, own: core.WindowState{Index: 1000, Cur: 4}, rate: 6, mine: 4, counted: 8},
		{name: "half here, at 2.2 times the limit", lowC: 8, own: core.WindowState{Index: 1000, Cur: 4}, rate: 11, mine: 4, counted: 8, flooding: true},
	} {
		m := newTestMachine(t, nil) // 10 per window, 2 PoPs
		e := m.entry("d")
		e.lowW, e.lowC, e.lowPrev, e.headroom = 1000, tc.lowC, tc.lowPrev, 1
		e.own, e.rate = tc.own, tc.rate/testWindow
		mine, counted := m.part(e)
		assert.Equal(t, [2]int64{tc.mine, tc.counted}, [2]int64{mine, counted}, "%s: part", tc.name)
		assert.Equal(t, tc.flooding, m.flooding(e), "%s: flooding", tc.name)
	}
}

// TestClaimsSkipUsedSlots: a calm identity's free unit of window w may
// still be unreported when its free unit of w+1 is spent; an item sent in
// w+1 then gives up neither slot, since each op reporting a use claims
// its slot at Redis and a second claim would free another PoP's reserved
// credit. (Found by TestPropertyBudget once calm identities stopped
// sending an item every Sync: claims skipped only the latest used slot.)
func TestClaimsSkipUsedSlots(t *testing.T) {
	m := newTestMachine(t, func(c *Config) { c.Groups = 1 })
	m.Request(w0+5, "u", 1) // free credit of window 1000
	assert.Empty(t, m.Tick(w0+100), "calm, one request: nothing sent, the free op of 1000 stays unreported")
	m.Request(w0+testWindow+5, "u", 1) // free credit of window 1001
	_, c := m.Request(w0+testWindow+10, "u", 1)
	require.NotNil(t, c)
	assert.Equal(t, []int64{1002, 1003}, c.Items[0].Claims, "the decision Call gives up only the next two windows' slots; 1000 and 1001 were used")
	assert.ElementsMatch(t, []Op{{X: 1000, GW: GWFree, U: 1}, {X: 1001, GW: GWFree, U: 1}}, c.Items[0].Ops, "both free units reported with it, each claiming its slot")
	m.Complete(w0+testWindow+20, c, &Result{Now: w0 + testWindow + 20, Window: 1001, Items: []ItemResult{{Allowed: 1, CW: 2, Headroom: 1}}}, nil)
	calls := m.Tick(w0 + testWindow + 100)
	require.Len(t, calls, 1)
	require.Len(t, calls[0].Items, 1)
	it := calls[0].Items[0]
	assert.Empty(t, it.Ops, "the free units went with the decision Call")
	assert.Empty(t, it.Claims, "nothing more to give up: 1000 and 1001 are claimed by their ops, 1002 was")
}

// TestNoWaitPrefetches: under NoWait a calm identity's one request makes
// the next Sync ask a grant (its next unit is in hand before it is asked
// for: latency bought with Redis work per identity); by default that Sync
// asks nothing (Redis work follows headroom).
func TestNoWaitPrefetches(t *testing.T) {
	for _, noWait := range []bool{false, true} {
		m := newTestMachine(t, func(c *Config) { c.NoWait = noWait; c.Groups = 1 })
		m.Request(w0+5, "p", 1) // free credit
		calls := m.Tick(w0 + 100)
		if !noWait {
			assert.Empty(t, calls, "default: a calm identity's one request asks nothing")
			continue
		}
		require.Len(t, calls, 1, "NoWait: the Sync carries the identity")
		require.Len(t, calls[0].Items, 1)
		assert.Positive(t, calls[0].Items[0].Want, "NoWait: a grant is asked ahead of the next request")
	}
}

// TestOutageLongerThanAWindow: an outage that reaches two windows past
// Redis' last count of a contested identity admits it here within an
// equal share, Max/P, per window: that count, and this PoP's counts of
// its window, are too old to share by. Reading this PoP's counts of that
// window as 0 once they rolled away gave a share of 0: one unit, then
// nothing for the rest of the outage.
func TestOutageLongerThanAWindow(t *testing.T) {
	m := newTestMachine(t, func(c *Config) { c.Limit = core.PerWindow(40, testWindow*time.Millisecond); c.PoPs = 4 })
	m.Request(w0, "s", 1) // free credit
	_, c := m.Request(w0+1, "s", 1)
	require.NotNil(t, c)
	m.Complete(w0+2, c, &Result{Now: w0 + 2, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: 8, Headroom: 5}}}, nil) // contested, 1 of 8 reported here
	start := int64(w0 + 2*testWindow + testWindow/2)                                                                    // halfway through window 1002
	admitted := admittedWhileDown(m, "s", start, 100)
	assert.Equal(t, 40/4, admitted, "window 1002, Redis' last count from window 1000: Max/P here")
}

// TestGraceAfterOutage: once Redis answers again after an outage, a
// contested identity stays on the fallback for a Sync interval and two
// round trips (the other PoPs' reports of their outage admissions land
// meanwhile), a calm one goes to Redis at once, and after the grace the
// contested one goes to Redis again; under FailClosed there is no grace.
// Without it the contested identity's first decisions at Redis raced
// those reports.
func TestGraceAfterOutage(t *testing.T) {
	for _, failClosed := range []bool{false, true} {
		m := newTestMachine(t, func(c *Config) {
			c.Limit = core.PerWindow(40, testWindow*time.Millisecond)
			c.PoPs = 4
			c.FailClosed = failClosed
		})
		m.Request(w0, "s", 1) // free credit
		_, c := m.Request(w0+1, "s", 1)
		require.NotNil(t, c)
		m.Complete(w0+2, c, &Result{Now: w0 + 2, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: 8, Headroom: 5}}}, nil) // contested
		_, c = m.Request(w0+3, "s", 1)
		require.NotNil(t, c, "FailClosed %v: contested with headroom: Redis decides", failClosed)
		m.Complete(w0+4, c, nil, errors.New("refused")) // the outage starts
		b := m.Tick(w0 + 100)
		require.NotEmpty(t, b, "FailClosed %v: a batch goes out (the report, or a probe)", failClosed)
		items := make([]ItemResult, len(b[0].Items))
		for i := range items {
			items[i] = ItemResult{Allowed: -1, CW: 9, Headroom: 5}
		}
		m.Finish(b[0], &Result{Now: w0 + 100, Window: 1000, Items: items}, nil) // Redis is back
		grace := (m.Config().SyncInterval + 2*m.Config().RTT).Milliseconds()
		d, c := m.Request(w0+101, "s", 1)
		if failClosed {
			assert.NotNil(t, c, "FailClosed: no grace, the contested identity goes to Redis")
		} else {
			assert.Nil(t, c, "in the grace a contested identity asks no Redis")
			assert.Equal(t, SrcFallback, d.Source, "in the grace: decided on the view")
		}
		m.Request(w0+102, "k", 1) // a calm identity's free unit
		_, c = m.Request(w0+103, "k", 1)
		assert.NotNil(t, c, "FailClosed %v: a calm identity goes to Redis in the grace", failClosed)
		_, c = m.Request(w0+100+grace, "s", 1)
		assert.NotNil(t, c, "FailClosed %v: after the grace the contested identity goes to Redis", failClosed)
	}
}

// TestOutageShareNothingCounted: a contested identity of which Redis'
// last reply counted nothing in its window (C 0, the previous window
// nearly full) keeps the whole limit in an outage, under the sliding
// rule: half way through the window, 9 of 10 in the previous one weigh
// just under 4.5, and a unit fits while the estimate stays under the
// limit (core.SlidingAdmits), so the free unit and 5 fallback units do. A
// share of C taken with C at 0 divides by zero and denies every fallback
// unit (1 admitted: the free one).
func TestOutageShareNothingCounted(t *testing.T) {
	m := newTestMachine(t, nil) // limit 10, 2 PoPs
	start := int64(w0 + testWindow)
	_, c := m.Request(start, "z", 2) // over the free credit: Redis decides
	require.NotNil(t, c)
	m.Complete(start+1, c, &Result{Now: start + 1, Window: 1001, Items: []ItemResult{{Allowed: 0, CW: 0, CPrev: 9, Headroom: 1}}}, nil) // contested, nothing counted in 1001
	half := start + testWindow/2
	admitted := admittedWhileDown(m, "z", half, 20)
	assert.Equal(t, 6, admitted, "the free unit and 5 on the fallback: 4.5 + 5 < 10, 4.5 + 6 is not")
}

// TestRedisRetryAfterPersists: a denial Redis decided tells Redis' word on
// when the units would fit (Describe's RetryAfter, counted from when this
// PoP sent the call), and so does the next request denied here while that
// time is ahead, not the shorter full wait the view holds (a Sync interval
// when what fills the limit is budget held elsewhere). Caught mutations:
// Redis' retry not kept (the first RetryAfter falls to the view's 1 ms),
// kept only for the decision Redis made (the second tells 91 ms), counted
// from the reply's arrival (2,999 ms) or from Redis' time (2,995 ms, its
// clock need not be the PoP's).
func TestRedisRetryAfterPersists(t *testing.T) {
	m := newTestMachine(t, nil)
	_, c := m.Request(w0, "k", 4)
	require.NotNil(t, c, "4 units are more than the free credit")
	d := m.Complete(w0+5, c, &Result{Now: w0 + 1, Window: 1000, Items: []ItemResult{{Allowed: 0, CW: 0, Headroom: 0, Retry: 3000}}}, nil)
	require.Equal(t, Decision{Allowed: false, Source: SrcRedis}, d)
	assert.Equal(t, 2994*time.Millisecond, m.Describe(w0+6, "k", 4, d).RetryAfter, "Redis' word from the call's sending, 2,994 ms after the decision is told")
	d, c = m.Request(w0+10, "k", 4)
	require.Nil(t, c, "known full: denied here")
	require.Equal(t, SrcFull, d.Source)
	assert.Equal(t, 2990*time.Millisecond, m.Describe(w0+10, "k", 4, d).RetryAfter, "still Redis' word")
}

// TestEntrySize: a full entry fits Go's 224-byte size class (on a 64-bit
// machine; smaller on 32; it is 224 bytes): a field added costs every full
// entry 16 bytes more (the 240 class), about 3 B per view entry on mixed at
// 1,000,000 identities. A failure here asks for the field's cost to be
// measured (pop-sim's memory section) and the bound moved on purpose.
func TestEntrySize(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(entry{}), uintptr(224))
}

// TestRequestRefusesBadWeight: Machine.Request of a weight outside
// 1..Limit.Max panics with an error wrapping core.ErrBadWeight and leaves
// the view as it was: a negative weight spent from a grant added to its
// balance units Redis never granted (two PoPs admitted 15 of 10 on a real
// Redis). Caught mutation: the check left out (no panic; the balance grows).
func TestRequestRefusesBadWeight(t *testing.T) {
	m := newTestMachine(t, nil) // 10 per window, 2 PoPs
	e := m.entry("g")
	e.grants[0] = grantSlot{win: 1000, bal: 1}
	for _, n := range []int64{0, -5, 11} {
		assert.PanicsWithError(t, fmt.Sprintf("budget: Machine.Request of %d units (limit 10): %v", n, core.ErrBadWeight), func() { m.Request(w0+5, "g", n) }, "weight %d", n)
		assert.Equal(t, int64(1), e.grants[0].bal, "weight %d: the balance as it was", n)
		assert.Zero(t, e.demand, "weight %d: no demand counted", n)
	}
	d, c := m.Request(w0+5, "g", 1)
	assert.Nil(t, c)
	assert.Equal(t, Decision{Allowed: true, Source: SrcGrant}, d, "a good weight is decided")
}
