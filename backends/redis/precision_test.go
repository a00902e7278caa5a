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

// TestLargeMaxAgreesWithCore: at core.MaxLimit the scripts, which read
// max and n as Lua numbers (float64), agree with core's int64 math to the
// unit (past 2^53, n = 2^59+1 was read as 2^59 and Redis admitted what
// core denied; Validate now refuses such a Max).
func TestLargeMaxAgreesWithCore(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	const max = int64(core.MaxLimit)
	const n = max/2 + 1
	now := int64(1_764_979_200_000) + 1234
	for _, a := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		lim := core.Limit{Max: max, Window: time.Minute, Algorithm: a}
		l := newLimiter(t, c, lim, WithExpirySlack(time.Hour))
		m := &model{limit: lim}
		key := "big:" + a.String()
		for step, k := range []int64{n, n - 2, 1, 1} {
			want := m.decide(now, k, true)
			got, err := l.AllowN(ctx, key, at(now), k)
			require.NoError(t, err)
			assert.Equal(t, want.Allowed, got.Allowed, "%s step %d: redis %+v, go %+v", a, step, got, want)
			assert.Equal(t, want.Remaining, got.Remaining, "%s step %d: redis %+v, go %+v", a, step, got, want)
		}
	}
}

// TestLongWindowBucketAgreesWithCore: the token bucket's TAT is in µs,
// exact in Lua only below 2^53 µs (the year 2255), and runs up to a window
// ahead of now: at core.MaxWindow (100 years) Redis and core agree (with a
// window of time.Duration's largest, the TAT of 16 of 17 units lay past
// 2^53 µs, Lua rounded it and Redis denied the 17th unit core admits).
func TestLongWindowBucketAgreesWithCore(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for _, max := range []int64{17, 2} {
		lim := core.Limit{Max: max, Window: core.MaxWindow, Algorithm: core.TokenBucket}
		l := newLimiter(t, c, lim, WithExpirySlack(time.Hour))
		m := &model{limit: lim}
		now := int64(1_764_979_200_000) + 1234
		key := fmt.Sprintf("lifetime%d", max)
		for step, n := range []int64{max - 1, 1, 1} {
			want := m.decide(now, n, true)
			got, err := l.AllowN(ctx, key, at(now), n)
			require.NoError(t, err)
			assert.Equal(t, want.Allowed, got.Allowed, "max %d step %d, n %d: redis %+v, go %+v", max, step, n, got, want)
			assert.Equal(t, want.Remaining, got.Remaining, "max %d step %d, n %d: redis %+v, go %+v", max, step, n, got, want)
			assert.Equal(t, want.ResetAfter, got.ResetAfter, "max %d step %d, n %d: redis %+v, go %+v", max, step, n, got, want)
		}
	}
}
