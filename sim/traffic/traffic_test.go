package traffic

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func small(scenario string) Config {
	return Config{Scenario: scenario, PoPs: 4, Identities: 500, Requests: 5000,
		Limit: 20, Window: time.Second, Seed: 7}
}

func TestSameSeedSameTrace(t *testing.T) {
	for _, s := range Scenarios {
		a, err := Generate(small(s))
		require.NoError(t, err)
		b, _ := Generate(small(s))
		require.True(t, reflect.DeepEqual(a.Requests, b.Requests), "%s: two traces of one seed differ", s)
		c := small(s)
		c.Seed = 8
		d, _ := Generate(c)
		require.False(t, reflect.DeepEqual(a.Requests, d.Requests), "%s: seeds 7 and 8 gave the same trace", s)
	}
}

func TestTraceIsSortedSizedAndInRange(t *testing.T) {
	for _, s := range Scenarios {
		c := small(s)
		tr, err := Generate(c)
		require.NoError(t, err)
		assert.EqualValues(t, c.Requests, len(tr.Requests), "%s: %d requests, want %d", s, len(tr.Requests), c.Requests)
		for i, r := range tr.Requests {
			require.False(t, i > 0 && r.At < tr.Requests[i-1].At, "%s: request %d out of order", s, i)
			require.False(t, r.At < 0 || r.At >= tr.Duration || int(r.ID) >= c.Identities ||
				int(r.PoP) >= c.PoPs || r.N != 1, "%s: request %d out of range: %+v", s, i, r)
		}
	}
}

// perIdentity counts each identity's requests and the PoPs it used.
func perIdentity(tr *Trace) (counts map[int32]int, pops map[int32]map[int16]bool) {
	counts, pops = map[int32]int{}, map[int32]map[int16]bool{}
	for _, r := range tr.Requests {
		counts[r.ID]++
		if pops[r.ID] == nil {
			pops[r.ID] = map[int16]bool{}
		}
		pops[r.ID][r.PoP] = true
	}
	return counts, pops
}

func TestMixedHasAttackersSpreadAndCalmPinned(t *testing.T) {
	c := small("mixed")
	tr, _ := Generate(c)
	counts, pops := perIdentity(tr)
	perWindowMax := int(c.Limit) * Windows
	var spreadAttackers, calmOver int
	for id, n := range counts {
		if n >= 2*perWindowMax && len(pops[id]) == c.PoPs {
			spreadAttackers++
		}
		if int(id) >= 3*c.Identities/classShare+1 && (n > int(calmCap*float64(perWindowMax)) || len(pops[id]) != 1) {
			calmOver++
		}
	}
	require.NotEqualValues(t, 0, spreadAttackers, "no attacker at 2× the limit or more spread over all PoPs")
	require.EqualValues(t, 0, calmOver, "%d calm identities above the cap or on several PoPs", calmOver)
}

func TestPinnedKeepsEveryIdentityOnOnePoP(t *testing.T) {
	tr, _ := Generate(small("pinned"))
	_, pops := perIdentity(tr)
	for id, ps := range pops {
		require.EqualValues(t, 1, len(ps), "identity %d on %d PoPs", id, len(ps))
	}
}

func TestBadConfig(t *testing.T) {
	for _, c := range []Config{
		{Scenario: "nope", PoPs: 1, Identities: 1, Requests: 1, Limit: 1, Window: time.Second},
		{Scenario: "mixed", PoPs: 0, Identities: 1, Requests: 1, Limit: 1, Window: time.Second},
		{Scenario: "mixed", PoPs: 1, Identities: -1, Requests: 1, Limit: 1, Window: time.Second},
		{Scenario: "mixed", PoPs: 1, Identities: 1, Requests: 0, Limit: 1, Window: time.Second},
		{Scenario: "mixed", PoPs: 1, Identities: 1, Requests: 1, Limit: 0, Window: time.Second},
		{Scenario: "mixed", PoPs: 1, Identities: 1, Requests: 1, Limit: 1, Window: 0},
	} {
		_, err := Generate(c)
		assert.Error(t, err, "%+v accepted", c)
	}
}
