package metrics_test

import (
	"context"
	"testing"
	"time"

	redisbackend "github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/metrics"
	"github.com/edgelimit/edgelimit/sync/budget"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCanceledCallerCountedApart: a healthy Redis, a hooked client and a
// wrapped Redis limiter; a caller whose context was cancelled (an HTTP
// client that hung up) is counted as decision_errors_total{type="canceled"}
// with no decision, and a go-redis call on a cancelled context as
// redis_errors_total{type="canceled"}: neither moves the series the
// package doc says to alert on (type="unavailable", type="transport"). It
// catches a cancelled caller counted as a Redis outage.
func TestCanceledCallerCountedApart(t *testing.T) {
	rdb, _ := redistest.Client(t)
	c := metrics.New()
	reg := register(t, c)
	rdb.AddHook(c.RedisHook("main"))
	l, err := redisbackend.New(rdb, core.PerWindow(5, time.Minute))
	require.NoError(t, err)
	w := c.Wrap("api", l)
	_, err = w.Allow(context.Background(), "warm")
	require.NoError(t, err)

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = w.AllowN(gone, "k", time.Now(), 1)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, rdb.Get(gone, "k").Err(), context.Canceled, "go-redis on a cancelled context")

	wantCounters(t, reg, "edgelimit_decision_errors_total", map[string]float64{"api/canceled": 1})
	wantCounters(t, reg, "edgelimit_decisions_total", map[string]float64{"api/allowed/redis": 1})
	assert.Equal(t, float64(1), counterValue(t, reg, "edgelimit_redis_errors_total", map[string]string{"type": "canceled"}))
	assert.Zero(t, counterValue(t, reg, "edgelimit_redis_errors_total", map[string]string{"type": "transport"}))
}

// TestBudgetCanceledCallerCountedApart: a budget limiter's caller gone
// before its call went out gets no decision and a *budget.CanceledError
// (matching context.Canceled, not core.ErrUnavailable); the error is
// counted as type="canceled", as for a Redis limiter, not as unavailable,
// and no decision is counted. It catches the two backends' cancelled
// callers counted under different types, and a decision on the view
// counted for a caller that left.
func TestBudgetCanceledCallerCountedApart(t *testing.T) {
	rdb, _ := redistest.Client(t)
	clk := core.NewManualClock(time.UnixMilli(1_800_000_000_500))
	l, err := budget.New(budget.Config{PoP: "p1", Limit: core.PerWindow(5, time.Minute), PoPs: 1}, rdb, clk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	require.NoError(t, l.Sync(context.Background()))
	c := metrics.New()
	reg := register(t, c)
	w := c.Wrap("api", l)
	_, err = w.AllowN(context.Background(), "k", clk.Now(), 1) // the free unit
	require.NoError(t, err)

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = w.AllowN(gone, "k", clk.Now(), 1) // past the free unit: the caller is gone
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, core.ErrUnavailable)

	wantCounters(t, reg, "edgelimit_decision_errors_total", map[string]float64{"api/canceled": 1})
	wantCounters(t, reg, "edgelimit_decisions_total", map[string]float64{"api/allowed/local": 1})
}
