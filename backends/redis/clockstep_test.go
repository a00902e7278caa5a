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

// TestClockStepBackTTLHasNoLag: an identity spends half its quota at
// stamps a day ahead, the clock is corrected, and it spends the other half
// at once: Redis counts those requests in the day-ahead state (so they
// wait its lag), and the key's TTL must not take that lag in too: its
// writes expire the key, at most its lifetime (two windows for the
// sliding window, one for the others, plus the slack) of real time after
// the last one, as for any other write. With the lag in the TTL the
// identity was denied for the rest of the day. Every algorithm and both
// layouts; the bucket counts nothing a day behind its TAT, so its half
// at the corrected clock is denied, and it heals alike.
func TestClockStepBackTTLHasNoLag(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for _, lim := range everyLimit(core.PerWindow(10, time.Minute)) {
		t.Run(lim.String(), func(t *testing.T) {
			prefix := fmt.Sprintf("steplag%d", lim.Algorithm)
			layouts := map[string]core.Limiter{"keys": newLimiter(t, c, lim, WithPrefix(prefix))}
			if bucketScripts[lim.Algorithm] != nil {
				layouts["bucketed"] = newLimiter(t, c, lim, WithPrefix(prefix+"b"), WithBuckets(4))
			}
			w := lim.WindowMillis()
			t0 := core.Millis(time.Now())
			ahead := (t0+24*3600*1000)/w*w + w/2 // mid-window, a day ahead
			for name, l := range layouts {
				d, err := l.AllowN(ctx, "id", at(ahead), lim.Max/2)
				require.NoError(t, err, name)
				require.True(t, d.Allowed, "%s: half the quota a day ahead: %+v", name, d)
				d, err = l.AllowN(ctx, "id", at(t0), lim.Max-lim.Max/2)
				require.NoError(t, err, name)
				if lim.Algorithm == core.TokenBucket {
					require.False(t, d.Allowed, "%s: a day behind the TAT the bucket counts nothing: %+v", name, d)
				} else {
					require.True(t, d.Allowed, "%s: the other half at the corrected clock, counted in the day-ahead state: %+v", name, d)
				}
			}
			// Redis' expiry, two windows (the longest lifetime) plus the
			// slack of real time from now, the last write's time.
			expireBy(t, c, "*"+prefix+"*", core.Millis(time.Now())+2*w+DefaultTimeout.Milliseconds()+1000)
			for name, l := range layouts {
				d, err := l.AllowN(ctx, "id", at(t0+3*w), 1)
				require.NoError(t, err, name)
				assert.True(t, d.Allowed, "%s: three windows after the correction, the keys the lagged writes left have expired: %+v", name, d)
			}
		})
	}
}
