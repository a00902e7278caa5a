package redis

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keyEnd is when, by the stamps alone, the key written by Max units at t0
// (ms) stops mattering: the end the package doc gives each algorithm's TTL
// before the slack.
func keyEnd(lim core.Limit, t0 int64) int64 {
	return t0 + expectedTTL(lim, t0, lim.Max).Milliseconds()
}

// onTimeStamp is the wall clock in ms, moved back one ms when the next ms
// would start a new window of lim's length, so that stamps t0 and t0+1
// share a fixed window. Without it a run whose t0 fell on a window's last
// ms (one in every Window ms) saw t0+1 admitted from zero.
func onTimeStamp(lim core.Limit) int64 {
	t0 := core.Millis(time.Now())
	if (t0+1)%lim.WindowMillis() == 0 {
		t0--
	}
	return t0
}

// TestLateRequestCountsInItsWindow: a request stamped inside a window whose
// quota is spent, but run at Redis 50 ms after the spent state's key would
// have expired by the stamps (queueing between reading the clock and the
// script running), is counted against that state and denied, for every
// algorithm under the default expiry slack (the call timeout, here 10 s:
// with the default 1 s, a loaded machine once ran the late request more
// than 950 ms after its sleep ended, past the slack). With keys expiring
// exactly at the end of their state (no slack), the late request found no
// key and was admitted from zero.
func TestLateRequestCountsInItsWindow(t *testing.T) {
	c, _ := redistest.Client(t)
	limits := everyLimit(core.PerWindow(3, 300*time.Millisecond))
	limits = append(limits, core.Limit{Max: 3, Window: time.Second, Algorithm: core.FixedWindow}) // the case first found: a fixed window of 1 s
	for i, lim := range limits {
		t.Run(lim.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			l := newLimiter(t, c, lim, WithPrefix(fmt.Sprintf("late%d", i)), // two fixed windows must not share a key
				WithTimeout(10*time.Second)) // the default slack is the timeout

			t0 := onTimeStamp(lim)
			d, err := l.AllowN(ctx, "late", at(t0), lim.Max)
			require.NoError(t, err, "%d units at t0", lim.Max)
			require.True(t, d.Allowed, "%d units at t0: %+v, want allowed", lim.Max, d)
			d, err = l.AllowN(ctx, "late", at(t0+1), 1)
			require.NoError(t, err, "one more at t0+1ms, on time")
			require.False(t, d.Allowed, "one more at t0+1ms, on time: %+v, want denied", d)
			// Redis expires the key by its own clock, which cannot be
			// injected: wait until the key's end has passed on the wall clock.
			time.Sleep(time.Until(time.UnixMilli(keyEnd(lim, t0) + 50)))
			d, err = l.AllowN(ctx, "late", at(t0+1), 1)
			require.NoError(t, err)
			assert.False(t, d.Allowed, "stamped t0+1ms, run 50ms after its state's end: admitted (%+v), want denied", d)
		})
	}
}
