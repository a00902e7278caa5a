package budget

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDenialCoveredByLateGrant: a request whose decision Call went out
// while this PoP held no budget, and which Redis denied because it had
// granted its last units to this PoP's other Call meanwhile, is admitted
// from that grant when the reply finds it here: the units are this PoP's
// to spend (Redis counted them as granted), so denying the request and
// spending them on the next one denies a request the limit admits. The
// spend is reported like any other. A mutation denying it (Redis' verdict
// alone) fails the first assertion; one spending a grant the deny cache
// says not to fails the last. (A late payment that skips the free
// credit's lease: TestDenialCoveredByLateFreeCredit.)
func TestDenialCoveredByLateGrant(t *testing.T) {
	m := newTestMachine(t, func(c *Config) { c.FreeCredit = -1 })
	_, c := m.Request(w0+10, "a", 1)
	require.NotNil(t, c, "no budget: a decision Call")
	m.Complete(w0+60, c, &Result{Now: w0 + 40, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: 1, Headroom: 5}}}, nil)

	settled := w0 + 10 + (m.cfg.SyncInterval + m.cfg.RTT).Milliseconds()
	_, c1 := m.Request(settled, "a", 1)
	require.NotNil(t, c1, "no grant yet: a decision Call")
	require.Positive(t, c1.Items[0].Want, "a settled identity's Call asks a top-up")
	_, c2 := m.Request(settled+5, "a", 1)
	require.NotNil(t, c2, "the grant is not here yet: a second decision Call")
	assert.Zero(t, c2.Items[0].Want, "one top-up in flight")

	d := m.Complete(settled+50, c1, &Result{Now: settled + 20, Window: 1000, Items: []ItemResult{{Allowed: 1, Grant: 2, CW: 2, Headroom: 0}}}, nil)
	assert.Equal(t, Decision{Allowed: true, Source: SrcRedis}, d, "Redis admits the first and grants its last 2 units")
	d = m.Complete(settled+60, c2, &Result{Now: settled + 25, Window: 1000, Items: []ItemResult{{Allowed: 0, CW: 2, Headroom: 0, Retry: 500}}}, nil)
	assert.Equal(t, Decision{Allowed: true, Source: SrcGrant}, d, "denied at Redis for the grant its reply found here: admitted from it")
	e := m.view["a"]
	require.NotNil(t, e)
	assert.Equal(t, int64(1), m.balance(e, 1000), "one unit of the grant left")
	assert.Equal(t, []Op{{X: 1000, GW: 1000, U: 1}}, e.pending(), "the spend is reported")
	assert.Equal(t, uint64(1), m.Stats().PaidLate, "counted as paid late")
	d, c = m.Request(settled+70, "a", 1)
	assert.Nil(t, c)
	assert.Equal(t, Decision{Allowed: true, Source: SrcGrant}, d, "the last unit of the grant")

	// the deny cache rules out a late grant, as it does a grant at request
	m2 := newTestMachine(t, func(c *Config) { c.FreeCredit = -1 })
	_, c = m2.Request(w0+10, "b", 1)
	m2.Complete(w0+60, c, &Result{Now: w0 + 40, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: 1, Headroom: 5}}}, nil)
	_, c1 = m2.Request(settled, "b", 1)
	_, c2 = m2.Request(settled+5, "b", 1)
	m2.Complete(settled+50, c1, &Result{Now: settled + 20, Window: 1000, Items: []ItemResult{{Allowed: 1, Grant: 2, CW: 2, Headroom: 0}}}, nil)
	d = m2.Complete(settled+60, c2, &Result{Now: settled + 25, Window: 1000, Items: []ItemResult{{Allowed: 0, CW: 10, Headroom: 0, Retry: 500}}}, nil)
	assert.Equal(t, Decision{Allowed: false, Source: SrcRedis}, d, "C alone denies a unit (the deny cache): no late grant")
	assert.Zero(t, m2.Stats().PaidLate)
}

// TestDenialCoveredByLateFreeCredit: a request Redis denies at the end of
// a window whose reply lands in the next, where this PoP's free slot of a
// settled identity is still unused, is admitted from that slot, as a
// request made at the reply's arrival would be; not when the free
// credit's lease ends before that window. Mutations caught: trying only
// the grant balance on a denial (the first case), a late payment that
// skips the lease (the second).
func TestDenialCoveredByLateFreeCredit(t *testing.T) {
	d, m := lateDenial(t, math.MaxInt64/2)
	assert.Equal(t, Decision{Allowed: true, Source: SrcFree}, d, "denied at Redis in window 1000, admitted from the free slot of 1001 its reply landed in")
	assert.Contains(t, m.view["a"].pending(), Op{X: 1001, GW: GWFree, U: 1}, "the slot's use is reported")
	d, _ = m.Request(w0+testWindow+50, "a", 1)
	assert.NotEqual(t, Decision{Allowed: true, Source: SrcFree}, d, "the slot of 1001 is spent")

	assert.Equal(t, uint64(1), m.Stats().PaidLate)

	d, m = lateDenial(t, 1000)
	assert.Equal(t, Decision{Allowed: false, Source: SrcRedis}, d, "the lease ends with window 1000: no free credit in 1001")
	assert.Zero(t, m.Stats().PaidLate)
}

// lateDenial has a settled identity's request Redis denies at the end of
// window 1000 with its reply landing in 1001, on a Machine whose free
// credit is leased through window through, and returns the request's
// Decision and the Machine.
func lateDenial(t *testing.T, through int64) (Decision, *Machine) {
	t.Helper()
	m := newTestMachine(t, func(c *Config) { c.FreeCredit = 1 })
	for g := range m.groups {
		m.groups[g] = groupState{leased: through, leasedFrom: math.MinInt64, checkedTo: math.MinInt64, keptFrom: math.MinInt64, keptTo: math.MinInt64}
	}
	m.lease, m.leaseFrom = through, math.MinInt64
	d, c := m.Request(w0+10, "a", 1)
	require.Nil(t, c)
	require.Equal(t, Decision{Allowed: true, Source: SrcFree}, d, "the window's first unit is free")
	settled := w0 + 10 + (m.cfg.SyncInterval + m.cfg.RTT).Milliseconds()
	_, c = m.Request(settled, "a", 1)
	require.NotNil(t, c, "the slot used, no grant: a decision Call")
	assert.NotContains(t, c.Items[0].Claims, int64(1001), "a settled identity keeps its next windows' slots")
	m.Complete(settled+50, c, &Result{Now: settled + 25, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: 2, Headroom: 6}}}, nil)

	_, c = m.Request(w0+testWindow-5, "a", 1)
	require.NotNil(t, c, "a decision Call at the window's end")
	return m.Complete(w0+testWindow+40, c, &Result{Now: w0 + testWindow - 1, Window: 1000, Items: []ItemResult{{Allowed: 0, CW: 3, Headroom: 0, Retry: 20}}}, nil), m
}

// TestDenialBeforeItsGrantLands: Redis runs this PoP's Sync batch, which
// grants the identity's last unit here, and then its decision Call, which
// it denies for that unit; the denial's reply lands first (two
// connections' replies land in either order). At a lone PoP (Config.PoPs
// 1) the denial is parked (Decision.Parked) until the batch's reply lands:
// Finish returns the Call, paid from the grant it brought (Complete then
// returns that Decision), so the PoP admits its limit to the unit. No
// known-full wait starts while the batch is out: the next request asks
// Redis. Caught mutations: no parking (the request denied, the grant
// landing for a later request: a client at a limit of 1 denied its first
// request), the parked Call not returned by Finish or not paid, the full
// wait set on that denial (the next request denied here).
func TestDenialBeforeItsGrantLands(t *testing.T) {
	m, b := grantOutFor(t, 1)
	_, c := m.Request(w0+110, "s", 1)
	require.NotNil(t, c, "no grant here yet: a decision Call")
	d := m.Complete(w0+130, c, &Result{Now: w0 + 120, Window: 1000, Items: []ItemResult{{Allowed: 0, CW: 9, Headroom: 0, Retry: 500}}}, nil)
	assert.Equal(t, Decision{Allowed: false, Source: SrcRedis, Parked: true}, d, "Redis granted the last unit to the batch first: parked for it")
	assert.Equal(t, d, m.Complete(w0+135, c, nil, nil), "completed again: still parked")

	d2, c2 := m.Request(w0+140, "s", 1)
	require.NotNil(t, c2, "the batch that asked a grant is out: no known-full wait, Redis is asked (got %+v)", d2)
	m.Clock(w0 + 160)
	resolved := m.Finish(b, &Result{Now: w0 + 115, Window: 1000, Items: []ItemResult{{Allowed: -1, Grant: 1, CW: 9, Headroom: 0}}}, nil)
	require.Equal(t, []*Call{c}, resolved, "the batch's reply resolves the parked Call")
	assert.Equal(t, Decision{Allowed: true, Source: SrcGrant}, m.Complete(w0+165, c, nil, nil), "paid from the grant the batch brought")
	st := m.Stats()
	assert.Equal(t, uint64(1), st.Parked)
	assert.Equal(t, uint64(1), st.PaidParked)
	assert.Equal(t, uint64(1), st.PaidLate)
	assert.Equal(t, []Op{{X: 1000, GW: 1000, U: 1}}, m.view["s"].pending(), "the spend is reported")

	d2 = m.Complete(w0+170, c2, &Result{Now: w0 + 150, Window: 1000, Items: []ItemResult{{Allowed: 0, CW: 9, Headroom: 0, Retry: 500}}}, nil)
	assert.Equal(t, Decision{Allowed: false, Source: SrcRedis}, d2, "the grant is spent, no batch out: denied, not parked")
	d2, c2 = m.Request(w0+180, "s", 1)
	assert.Nil(t, c2, "the identity is known full now: no batch asks a grant")
	assert.Equal(t, Decision{Allowed: false, Source: SrcFull}, d2, "denied here for the wait")
}

// TestParkedDenialStands: a parked denial (TestDenialBeforeItsGrantLands)
// stays denied when the batch fails (no grant came: Finish returns it
// denied, the batch kept for the next Sync), when the batch granted
// nothing, and when its caller will not wait (Unpark: Finish then returns
// nothing). Several PoPs park nothing: the grant pays the next request
// (pop-sim at 8 PoPs: parking cost near-limit's p99 47 ms). Caught
// mutations: a failed batch's parked Call left parked (its caller waits
// for good), a parked Call paid by nothing, Unpark leaving the Call on the
// batch, parking at several PoPs.
func TestParkedDenialStands(t *testing.T) {
	denied := &Result{Now: w0 + 120, Window: 1000, Items: []ItemResult{{Allowed: 0, CW: 9, Headroom: 0, Retry: 500}}}
	for _, tc := range []struct {
		name   string
		result *Result
		err    error
	}{
		{"batch failed", nil, errors.New("connection reset")},
		{"nothing granted", &Result{Now: w0 + 115, Window: 1000, Items: []ItemResult{{Allowed: -1, CW: 10, Headroom: 0}}}, nil},
	} {
		m, b := grantOutFor(t, 1)
		_, c := m.Request(w0+110, "s", 1)
		require.NotNil(t, c)
		require.True(t, m.Complete(w0+130, c, denied, nil).Parked, tc.name)
		require.Equal(t, []*Call{c}, m.Finish(b, tc.result, tc.err), "%s: resolved", tc.name)
		assert.Equal(t, Decision{Allowed: false, Source: SrcRedis}, m.Complete(w0+140, c, nil, nil), "%s: denied", tc.name)
		assert.Zero(t, m.Stats().PaidParked, tc.name)
	}

	m, b := grantOutFor(t, 1)
	_, c := m.Request(w0+110, "s", 1)
	require.True(t, m.Complete(w0+130, c, denied, nil).Parked)
	assert.Equal(t, Decision{Allowed: false, Source: SrcRedis}, m.Unpark(c), "the caller left: denied")
	assert.Equal(t, Decision{Allowed: false, Source: SrcRedis}, m.Complete(w0+135, c, nil, nil), "no longer parked")
	assert.Empty(t, m.Finish(b, &Result{Now: w0 + 115, Window: 1000, Items: []ItemResult{{Allowed: -1, Grant: 1, CW: 9, Headroom: 0}}}, nil), "nothing parked on the batch")
	d, c := m.Request(w0+150, "s", 1)
	assert.Nil(t, c)
	assert.Equal(t, Decision{Allowed: true, Source: SrcGrant}, d, "the grant pays the next request")

	m, _ = grantOutFor(t, 2)
	_, c = m.Request(w0+110, "s", 1)
	assert.Equal(t, Decision{Allowed: false, Source: SrcRedis}, m.Complete(w0+130, c, denied, nil), "two PoPs: not parked")
	assert.Zero(t, m.Stats().Parked)
}

// grantOutFor returns a Machine of pops PoPs (one group, no free credit)
// whose identity "s" is contested (9 of 10 counted) and the Sync batch in
// flight that asks it a grant.
func grantOutFor(t *testing.T, pops int) (*Machine, *Call) {
	t.Helper()
	m := newTestMachine(t, func(c *Config) { c.Groups, c.FreeCredit, c.PoPs = 1, -1, pops })
	_, c := m.Request(w0+5, "s", 1)
	require.NotNil(t, c, "no budget: a decision Call")
	m.Complete(w0+20, c, &Result{Now: w0 + 10, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: 9, Headroom: 1}}}, nil)
	batches := m.Tick(w0 + 100)
	require.Len(t, batches, 1, "one group, one batch")
	b := batches[0]
	require.Len(t, b.Items, 1)
	require.Positive(t, b.Items[0].Want, "contested with demand: the batch asks a grant")
	return m, b
}
