package metrics_test

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// onlyLimiter hides every method of the limiter it holds but
// core.Limiter's: a limiter without PeekN.
type onlyLimiter struct{ core.Limiter }

// TestWrapKeepsPeekN: Wrap of a limiter that implements core.PeekerN (the
// local backend) implements it too, its PeekN forwarded (3 units of 4
// left fit, and of 2 left do not, with the wrapped limiter's own answers) and counted
// in peeks_total as Peek is; Wrap of one without PeekN does not claim it,
// so a caller falls back to Peek. Mutations it catches: the wrapper
// hiding PeekN (the old wrapper: Envoy's weighted checks then waited for
// one unit), claiming it for every limiter, or forwarding it uncounted.
func TestWrapKeepsPeekN(t *testing.T) {
	c := metrics.New()
	reg := register(t, c)
	ctx := context.Background()
	inner := newLocal(t, 4)
	l := c.Wrap("api", inner)
	pn, ok := l.(core.PeekerN)
	require.True(t, ok, "Wrap of a core.PeekerN keeps PeekN")
	for _, spend := range []int64{0, 2} {
		if spend > 0 {
			_, err := inner.AllowN(ctx, "k", epoch, spend)
			require.NoError(t, err)
		}
		got, err := pn.PeekN(ctx, "k", epoch, 3)
		require.NoError(t, err)
		want, err := inner.(core.PeekerN).PeekN(ctx, "k", epoch, 3)
		require.NoError(t, err)
		assert.Equal(t, want, got, "PeekN forwarded, %d units spent", spend)
		assert.Equal(t, spend == 0, got.Allowed, "3 units of %d left", 4-spend)
	}
	wantCounters(t, reg, "edgelimit_peeks_total", map[string]float64{
		"api/allowed/local": 1,
		"api/denied/local":  1,
	})

	_, ok = c.Wrap("plain", onlyLimiter{newLocal(t, 4)}).(core.PeekerN)
	assert.False(t, ok, "Wrap of a limiter without PeekN does not claim it")
}
