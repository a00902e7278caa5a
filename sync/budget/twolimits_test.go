package budget

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// twoLimitsStart is the plays' first instant: a wall-clock-like time, so
// windows of different lengths have far apart numbers, as in production.
var twoLimitsStart = time.Date(2026, 12, 6, 3, 0, 0, 5_000_000, time.UTC)

// playTwoLimits plays one interleaved history on a Limiter of each of
// lims present (Namespace ns[i], one manual clock shared) and returns
// every decision each made: every 25 ms limiter 0 asks 1 unit of one of
// three identities and limiter 1 n1 units of one of two, both Sync every
// 100 ms, for 3 s; then limiter 0 Resets identity u0 and both Peek it and
// ask it once more.
func playTwoLimits(t *testing.T, rdb *redis.Client, lims [2]core.Limit, ns [2]string, n1 int64, present [2]bool) [2][]core.Decision {
	t.Helper()
	ctx := context.Background()
	clock := core.NewManualClock(twoLimitsStart)
	var ls [2]*Limiter
	for i := range ls {
		if !present[i] {
			continue
		}
		l, err := New(Config{PoP: "pop", Incarnation: uint64(10 + i), Limit: lims[i], PoPs: 2, Namespace: ns[i]}, rdb, clock)
		require.NoError(t, err)
		ls[i] = l
	}
	var out [2][]core.Decision
	ask := func(i int, key string, n int64) {
		if ls[i] == nil {
			return
		}
		d, err := ls[i].AllowN(ctx, key, clock.Now(), n)
		require.NoError(t, err, "limiter %d, %s at %s", i, key, clock.Now())
		out[i] = append(out[i], d)
	}
	for step := range 120 {
		ask(0, fmt.Sprint("u", step%3), 1)
		ask(1, fmt.Sprint("u", step%2), n1)
		if step%4 == 3 {
			for _, l := range ls {
				if l != nil {
					require.NoError(t, l.Sync(ctx))
				}
			}
		}
		clock.Advance(25 * time.Millisecond)
	}
	if ls[0] != nil {
		require.NoError(t, ls[0].Reset(ctx, "u0"))
	}
	for i, l := range ls {
		if l == nil {
			continue
		}
		d, err := l.Peek(ctx, "u0", clock.Now())
		require.NoError(t, err, "limiter %d: Peek", i)
		out[i] = append(out[i], d)
	}
	ask(0, "u0", 1)
	ask(1, "u0", n1)
	for _, l := range ls {
		if l != nil {
			require.NoError(t, l.Close(ctx))
		}
	}
	return out
}

// TestTwoLimitsOneNamespace: two budget Limiters of different limits (10
// per second with 40 per second, with 1000 per hour, or with 10 per 2 s)
// under one Namespace on one real Redis play an interleaved history; each
// must decide exactly as it decides the same history alone in a namespace
// of its own (every Decision equal, a Reset of one leaving the other's
// counts), and the histories fill both limits. When keys named the
// namespace and group only, limits of one window length shared every
// bucket hash field, and both Limiters of 10/1s with 40/1s decided on the
// other's counts; limits of different windows wrote hashes of different
// epoch numbers at any one time.
func TestTwoLimitsOneNamespace(t *testing.T) {
	rdb, _ := redistest.Client(t)
	for _, tc := range []struct {
		name string
		lims [2]core.Limit
		n1   int64
	}{
		{"10/1s with 40/1s", [2]core.Limit{core.PerWindow(10, time.Second), core.PerWindow(40, time.Second)}, 3},
		{"10/1s with 1000/1h", [2]core.Limit{core.PerWindow(10, time.Second), core.PerWindow(1000, time.Hour)}, 30},
		{"10/1s with 10/2s", [2]core.Limit{core.PerWindow(10, time.Second), core.PerWindow(10, 2*time.Second)}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			both := playTwoLimits(t, rdb, tc.lims, [2]string{"route", "route"}, tc.n1, [2]bool{true, true})
			for i := range 2 {
				var present [2]bool
				present[i] = true
				alone := playTwoLimits(t, rdb, tc.lims, [2]string{"alone0", "alone1"}, tc.n1, present)
				require.Len(t, both[i], len(alone[i]), "limiter %d: decisions", i)
				denied, differ := 0, []string(nil)
				for j := range alone[i] {
					if alone[i][j] != both[i][j] {
						differ = append(differ, fmt.Sprintf("decision %d: %+v, alone %+v", j, both[i][j], alone[i][j]))
					}
					if !alone[i][j].Allowed {
						denied++
					}
				}
				assert.Empty(t, differ, "limiter %d (%d per %s): decisions with the other limit in its namespace that differ from its decisions alone (of %d)",
					i, tc.lims[i].Max, tc.lims[i].Window, len(alone[i]))
				assert.Positive(t, denied, "limiter %d: the history fills its limit", i)
			}
			require.NoError(t, rdb.FlushAll(context.Background()).Err())
		})
	}
}
