package local

import (
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSweepKeepsStateOnTimeRequestsNeed: an identity spends its quota at
// t0; a request of another identity stamped 5 s earlier (an event-time
// caller draining a backlog, one goroutine's clock read long before it
// took the lock) inserts its key, and its sweep judges the spent state
// stale from that old stamp. The spent identity's next request, stamped on
// time right after t0, must still be decided on its state: core (and the
// Redis backend, whose other keys a late request never touches) denies it.
func TestSweepKeepsStateOnTimeRequestsNeed(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		lim := core.Limit{Max: 3, Window: time.Second, Algorithm: a}
		l := mustNew(t, lim, WithCapacity(1024), WithShards(1))
		t0 := epoch.Add(500 * time.Millisecond)
		model := coreModel(lim)
		require.True(t, mustAllow(t, l, "spent", t0, 3).Allowed)
		model(t0, 3, true)

		mustAllow(t, l, "other", t0.Add(-5*time.Second), 1) // a late stamp; its insert sweeps the tail

		next := t0.Add(10 * time.Millisecond)
		want := model(next, 1, true)
		got := mustAllow(t, l, "spent", next, 1)
		assert.Equal(t, want.Allowed, got.Allowed, "%s: on-time request 10 ms after the quota was spent, after another identity's late insert: local %+v, core %+v (len %d)",
			a, got, want, l.Len())
	})
}

// TestLateRequestKeepsOnTimeCounts: an identity spends its quota at t0; a
// request of its own stamped 5 s earlier (read from the clock, then
// stalled; or an event-time caller) is committed, and then the identity
// asks again on time. Whatever the late request gets, the on-time request
// right after must still see the quota spent at t0, as core's math (and
// the Redis backend, whose key the late request only adds to) decides.
func TestLateRequestKeepsOnTimeCounts(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		lim := core.Limit{Max: 3, Window: time.Second, Algorithm: a}
		l := mustNew(t, lim)
		t0 := epoch.Add(500 * time.Millisecond)
		model := coreModel(lim)
		require.True(t, mustAllow(t, l, "id", t0, 3).Allowed)
		model(t0, 3, true)

		late := mustAllow(t, l, "id", t0.Add(-5*time.Second), 1)
		model(t0.Add(-5*time.Second), 1, true)

		next := t0.Add(10 * time.Millisecond)
		want := model(next, 1, true)
		got := mustAllow(t, l, "id", next, 1)
		assert.Equal(t, want.Allowed, got.Allowed, "%s: on-time request 10 ms after the quota was spent, after a request stamped 5 s late (got %+v): local %+v, core %+v",
			a, late, got, want)
	})
}
