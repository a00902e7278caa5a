package budget

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// In production the calls run on Redis' clock while the PoP decides on
// its own, so a reply's waits (deny-until, known full, Describe's retry)
// must count from the PoP's time the call went out, never from the
// reply's Now: with Redis S ms ahead they denied S ms too long (and told
// the client a RetryAfter S too long), with Redis S ms behind they had
// ended before they were set, so every denied request went to Redis.
// Each case would fail with the waits anchored on Result.Now.

// skews are Redis' clock minus the PoP's, ms: well within a 10 s window.
var skews = []int64{1500, -1500}

func TestDenyCacheRunsOnThePoPsClock(t *testing.T) {
	for _, skew := range skews {
		t.Run(fmt.Sprintf("redis%+dms", skew), func(t *testing.T) {
			m := newTestMachine(t, func(c *Config) { c.FreeCredit = -1 })
			redisNow := int64(w0 + 3000) // Redis' clock when the call runs: 3 s into window 1000
			local := redisNow - skew     // the PoP's when it sent it (the same window)
			_, c := m.Request(local, "k", 1)
			require.NotNil(t, c, "no grant, no credit: the request asks Redis")
			// C of w 5, of w−1 10: 5 + 10·0.7 = 12 of 10; C alone admits
			// one unit again 2 s later (5 + 10·0.5 leaves room)
			d := m.Complete(local+5, c, &Result{Now: redisNow, Window: redisNow / testWindow,
				Items: []ItemResult{{Allowed: 0, CW: 5, CPrev: 10, Headroom: 0, Retry: 2000}}}, nil)
			require.False(t, d.Allowed)
			desc := m.Describe(local+5, "k", 1, d)
			assert.LessOrEqual(t, desc.RetryAfter.Milliseconds(), int64(2000),
				"RetryAfter is Redis' retry from when the call went out, not shifted by the clocks' skew")
			d2, c2 := m.Request(local+1500, "k", 1)
			assert.Nil(t, c2, "within Redis' retry the deny cache answers")
			assert.Equal(t, SrcDenyCache, d2.Source, "within Redis' retry: denied from the deny cache")
			_, c3 := m.Request(local+2500, "k", 1)
			assert.NotNil(t, c3, "past Redis' retry the request asks Redis again")
		})
	}
}

func TestKnownFullRunsOnThePoPsClock(t *testing.T) {
	for _, skew := range skews {
		t.Run(fmt.Sprintf("redis%+dms", skew), func(t *testing.T) {
			m := newTestMachine(t, func(c *Config) { c.FreeCredit = -1 })
			local := int64(w0 + 5000)
			m.Request(local, "k", 1)    // asks Redis (its call is dropped: only the entry matters)
			calls := m.Tick(local + 10) // the Sync asks a grant for it
			require.Len(t, calls, 1, "one batch")
			redisNow := local + 10 + skew
			items := make([]ItemResult, len(calls[0].Items))
			for i := range items {
				// full with budget this PoP holds none of: a wait of
				// min(retry, SyncInterval)
				items[i] = ItemResult{Allowed: -1, CW: 6, CPrev: 0, Headroom: 0, Retry: 50}
			}
			m.Finish(calls[0], &Result{Now: redisNow, Window: redisNow / testWindow, Items: items}, nil)
			d, c := m.Request(local+30, "k", 1)
			assert.Nil(t, c, "within the wait the PoP knows the identity full")
			assert.Equal(t, SrcFull, d.Source, "within the wait: denied as known full")
			_, c = m.Request(local+10+1000, "k", 1)
			assert.NotNil(t, c, "past the wait the request asks Redis again")
		})
	}
}
