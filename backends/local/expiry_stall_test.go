package local

import (
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/require"
)

// TestStalledWriterKeepsTheExpiry: a request reads the monotonic clock
// before it takes its shard's lock, so a goroutine stalled between the two
// (preempted on a loaded machine, for longer than the expiry slack) writes
// its count with a reading older than the last writer's. Its write must
// count from the latest reading brought under the lock, as a Redis script
// sets its key's TTL at the time Redis runs it: the state holds both
// counted units until the time to live of the stalled write counted from
// then. Caught mutation: the expiry counted from each caller's own reading
// (the stalled write's 1.5 s older reading made the state forgotten one
// or two seconds early, its two counted units with it, for every
// algorithm).
func TestStalledWriterKeepsTheExpiry(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		lim := core.Limit{Max: 10, Window: 10 * time.Second, Algorithm: a}
		var mono manualMonotonic
		l := mustNew(t, lim, WithMonotonic(&mono))

		mono.ms.Store(5000)
		require.True(t, mustAllow(t, l, "id", epoch, 1).Allowed)

		mono.ms.Store(3500) // the stalled goroutine's reading, taken before the first write
		second := mustAllow(t, l, "id", epoch.Add(time.Millisecond), 1)
		require.True(t, second.Allowed)
		ttl := min(second.ResetAfter.Milliseconds(), lifetimeMillis(lim)) + expirySlackMillis
		until := ((5000+ttl)/1000 + 1) * 1000 // its expiry counted from the latest reading, ms

		mono.ms.Store(until - 1)
		_, held := l.State("id")
		require.True(t, held, "held until %d ms", until)
		d, err := l.Peek(ctx, "id", epoch.Add(2*time.Millisecond))
		require.NoError(t, err)
		require.Equal(t, int64(10-2), d.Remaining, "both units counted")
		mono.ms.Store(until)
		_, held = l.State("id")
		require.False(t, held, "forgotten at %d ms", until)
	})
}
