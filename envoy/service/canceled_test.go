package service

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestRedisCancelledRPCIsNoOutage: on the redis backend and a healthy
// Redis, a ShouldRateLimit whose context was cancelled (Envoy gave up on
// the call) is answered with gRPC Canceled and counted as
// requests_total{code="canceled"}, not Unavailable and "error" as if
// Redis had failed. It catches a cancelled RPC reported as a store outage.
func TestRedisCancelledRPCIsNoOutage(t *testing.T) {
	rdb := harnessClient(t, 2*time.Second)
	clk := core.NewManualClock(poolT0)
	b := NewRedis(rdb, RedisOptions{Clock: clk})
	t.Cleanup(func() { b.Close(context.Background()) })
	reg := prometheus.NewRegistry()
	s, err := New(Options{Backend: b, Clock: clk, Metrics: NewMetrics(reg), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	s.SetConfig(loadRules(t, edgeRules))

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.ShouldRateLimit(gone, plain("10.0.0.1"))
	assert.Equal(t, codes.Canceled, status.Code(err), "%v", err)
	_, err = s.ShouldRateLimit(context.Background(), plain("10.0.0.1"))
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"canceled": 1, "ok": 1}, requestsByCode(t, reg))
}

// TestBudgetCancelledRPCCountedCanceled: on the budget backend and a
// healthy Redis, a ShouldRateLimit whose context was cancelled (Envoy gave
// up on the call) is answered with gRPC Canceled and counted as
// requests_total{code="canceled"}, as on the redis backend: the backend
// returns no decision for it. It catches a budget decision on the view
// answered (and counted "ok") for a caller that left.
func TestBudgetCancelledRPCCountedCanceled(t *testing.T) {
	rdb := harnessClient(t, 2*time.Second)
	clk := core.NewManualClock(poolT0)
	b := NewBudget(BudgetOptions{PoP: "a", Redis: rdb, PoPs: 6, Clock: clk, Sync: time.Hour})
	t.Cleanup(func() { b.Close(context.Background()) })
	reg := prometheus.NewRegistry()
	s, err := New(Options{Backend: b, Clock: clk, Metrics: NewMetrics(reg), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	s.SetConfig(loadRules(t, edgeRules))

	// The first request builds the limiter, whose Sync loop takes its
	// lease and may top up 10.0.0.1 at any moment after. The caller that
	// left asks for an identity this PoP never saw: no grant can cover it,
	// and 10 a minute over six PoPs leaves no free credit
	// (budget.AutoFreeCredit: 2 × 6 > 10), so its request needs Redis
	// whenever the loop's Sync lands.
	_, err = s.ShouldRateLimit(context.Background(), plain("10.0.0.1"))
	require.NoError(t, err)
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.ShouldRateLimit(gone, plain("10.0.0.2"))
	assert.Equal(t, codes.Canceled, status.Code(err), "%v", err)
	_, err = s.ShouldRateLimit(context.Background(), plain("10.0.0.1"))
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"canceled": 1, "ok": 2}, requestsByCode(t, reg))
}

// requestsByCode reads edgelimit_envoy_requests_total by code.
func requestsByCode(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != "edgelimit_envoy_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "code" {
					got[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return got
}
