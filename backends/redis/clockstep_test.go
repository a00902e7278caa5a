package redis

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClockStepBackHealsAlike: an identity spends its quota at stamps a
// day ahead (a wall clock stepped forward: a VM resumed with a wrong clock,
// a bad NTP source), then the clock is corrected. A request stamped just
// before that state (a late request, within the expiry slack) is counted
// in it by every backend alike. Redis forgets the key after its TTL of
// real time; three windows (plus the slack) later, with Redis' expiry done
// by expireBy, the local backend, one key per identity and (for the window
// algorithms) the bucketed layout all decide the next request alike: as
// for an identity never seen, instead of the local backend denying it for
// the rest of the day.
func TestClockStepBackHealsAlike(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for _, lim := range everyLimit(core.PerWindow(10, time.Minute)) {
		t.Run(lim.String(), func(t *testing.T) {
			prefix := fmt.Sprintf("clockstep%d", lim.Algorithm)
			ll, err := local.New(lim)
			require.NoError(t, err)
			limiters := []struct {
				name string
				lim  core.Limiter
			}{{"redis", newLimiter(t, c, lim, WithPrefix(prefix))}, {"local", ll}}
			if bucketScripts[lim.Algorithm] != nil {
				limiters = append(limiters, struct {
					name string
					lim  core.Limiter
				}{"redis-bucketed", newLimiter(t, c, lim, WithPrefix(prefix+"b"), WithBuckets(4))})
			}
			decideAll := func(now time.Time, n int64) []core.Decision {
				out := make([]core.Decision, len(limiters))
				for i, l := range limiters {
					d, err := l.lim.AllowN(ctx, "id", now, n)
					require.NoError(t, err, "%s", l.name)
					out[i] = d
				}
				return out
			}
			sameAll := func(what string, ds []core.Decision) {
				for i := 1; i < len(ds); i++ {
					assert.True(t, sameDecision(ds[0], ds[i]), "%s, %s: %s %+v, %s %+v", lim, what, limiters[0].name, ds[0], limiters[i].name, ds[i])
				}
			}

			w := lim.WindowMillis()
			t0 := core.Millis(time.Now())
			ahead := (t0+24*3600*1000)/w*w + w/2 // mid-window, a day ahead
			for i, d := range decideAll(at(ahead), lim.Max) {
				require.True(t, d.Allowed, "%s: %d units a day ahead: %+v", limiters[i].name, lim.Max, d)
			}
			late := decideAll(at(ahead-500), 1) // stamped 500 ms before the state, run at once
			for i, d := range late {
				assert.False(t, d.Allowed, "%s: a request 500 ms late, its quota spent: %+v", limiters[i].name, d)
			}
			sameAll("a request 500 ms late", late)

			// What Redis has done three windows (plus its slack) of real time later.
			expireBy(t, c, "*"+prefix+"*", core.Millis(time.Now())+3*w+DefaultTimeout.Milliseconds())
			healed := decideAll(at(t0+3*w), 1)
			sameAll("three windows after a day-long clock step was corrected", healed)
			assert.True(t, healed[0].Allowed, "redis: three windows after the correction: %+v", healed[0])
		})
	}
}

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
