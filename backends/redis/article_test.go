package redis

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// windowZero is a minute boundary: window 0 is [windowZero-60s, windowZero),
// window 1 starts at windowZero.
const windowZero = int64(1_700_000_040_000)

// boundaryBurst plays the article's table A: 100 requests in the last second
// of window 0 (one every 10 ms) and 100 in the first second of window 1.
// It returns how many were admitted.
func boundaryBurst(t *testing.T, l *Limiter) int {
	t.Helper()
	admitted := 0
	for _, start := range []int64{windowZero - 1000, windowZero} {
		for i := int64(0); i < 100; i++ {
			d, err := l.AllowN(context.Background(), "client", at(start+i*10), 1)
			require.NoError(t, err)
			if d.Allowed {
				admitted++
			}
		}
	}
	return admitted
}

// TestArticleTableA reproduces the article's boundary burst, limit 100 per
// 60 s: fixed admits 200, the sliding counter 100..105, the exact log 100.
func TestArticleTableA(t *testing.T) {
	c, _ := redistest.Client(t)
	want := map[core.Algorithm][2]int{
		core.FixedWindow:   {200, 200},
		core.SlidingWindow: {100, 105},
		core.SlidingLog:    {100, 100},
		core.TokenBucket:   {100, 105}, // refills 1 unit per 600 ms meanwhile
	}
	for _, lim := range everyLimit(core.PerWindow(100, time.Minute)) {
		l := newLimiter(t, c, lim, WithExpirySlack(time.Hour))
		got := boundaryBurst(t, l)
		t.Logf("table A, %-20s admitted %d of 200", lim, got)
		w := want[lim.Algorithm]
		if assert.GreaterOrEqual(t, got, w[0], "%s admitted %d, want %d..%d", lim, got, w[0], w[1]) {
			assert.LessOrEqual(t, got, w[1], "%s admitted %d, want %d..%d", lim, got, w[0], w[1])
		}
		g := modelBurst(lim)
		assert.Equal(t, g, got, "%s admitted %d at Redis, %d in core's Go math", lim, got, g)
	}
}

// modelBurst is boundaryBurst on core's Go math.
func modelBurst(lim core.Limit) int {
	m := &model{limit: lim}
	admitted := 0
	for _, start := range []int64{windowZero - 1000, windowZero} {
		for i := int64(0); i < 100; i++ {
			if m.decide(start+i*10, 1, true).Allowed {
				admitted++
			}
		}
	}
	return admitted
}
