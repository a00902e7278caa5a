package engine

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sim/netmodel"

	"github.com/stretchr/testify/require"
)

// TestSkewReachesRedisOnlyFromThePoPs checks where the skewed clocks go:
// pure-Redis mode decides exactly as core's math fed each request at its
// PoP's clock, redis-servertime exactly as core's math on true time (the
// decisions of no skew at all), and the two differ.
func TestSkewReachesRedisOnlyFromThePoPs(t *testing.T) {
	_, p := redistest.Client(t)
	e := testEnv(t, "spread-attack")
	e.RedisAddr = p.Addr
	e.Skew = netmodel.Skews(e.Trace.Config.PoPs, 400*time.Millisecond, 3)
	ctx := context.Background()
	check := func(name string, run runner, want []bool) {
		e.Namespace = t.Name() + name
		o, err := run(ctx, e)
		require.NoError(t, err)
		for i := range want {
			require.Equal(t, want[i], o.allowed[i], "%s, request %d: allowed, against core's math", name, i)
		}
	}
	skewed, truth := slidingModelAt(e, e.PoPAt), slidingModel(e)
	check("redis", runRedis, skewed)
	check("servertime", runRedisServerTime, truth)
	differ := 0
	for i := range skewed {
		if skewed[i] != truth[i] {
			differ++
		}
	}
	require.NotEqualValues(t, 0, differ, "a ±400ms skew changed no decision of a 1 s window")
}

// TestSkewedBudgetIsDeterministic runs the budget limiter with skewed
// clocks twice on one seed: same figures, and not those of no skew.
func TestSkewedBudgetIsDeterministic(t *testing.T) {
	_, p := redistest.Client(t)
	var rs []Result
	for i, skew := range []time.Duration{300 * time.Millisecond, 300 * time.Millisecond, 0} {
		e := testEnv(t, "spread-attack")
		e.RedisAddr = p.Addr
		e.Namespace = t.Name() + time.Duration(i).String()
		e.Skew = netmodel.Skews(e.Trace.Config.PoPs, skew, 3)
		r, err := Run(context.Background(), e, "budget")
		require.NoError(t, err)
		dropMachine(&r)
		rs = append(rs, r)
	}
	require.Equal(t, rs[0], rs[1], "one seed, two figures")
	require.NotEqual(t, rs[0], rs[2], "skew changed nothing")
}
