package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/server"
	"github.com/edgelimit/edgelimit/envoy/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sweepless is a Backend with exactly service.Backend's methods and no
// Sweep, as one written outside this module is: it forwards to a local
// backend.
type sweepless struct{ b *service.LocalBackend }

func (s sweepless) Acquire(l core.Limit) (core.Limiter, func(), error) { return s.b.Acquire(l) }
func (s sweepless) Keep(limits []core.Limit)                           { s.b.Keep(limits) }
func (s sweepless) Pool() service.PoolStats                            { return s.b.Pool() }
func (s sweepless) Close(ctx context.Context) error                    { return s.b.Close(ctx) }
func (s sweepless) Name() string                                       { return "sweepless" }

// TestBackendWithoutSweep: a Backend that does not implement
// service.Sweeper is served, with the server's sweep on (every
// millisecond), and limits as any other; Shutdown (at the test's end)
// succeeds. It catches a Backend interface that requires Sweep (such a
// backend does not compile), and the server's sweep calling Sweep on a
// backend without it.
func TestBackendWithoutSweep(t *testing.T) {
	var _ service.Backend = sweepless{}
	_, isSweeper := any(sweepless{}).(service.Sweeper)
	require.False(t, isSweeper, "the test's backend has no Sweep")
	clk := core.NewManualClock(t0)
	o := server.Options{Service: service.Options{Backend: sweepless{service.NewLocal(clk, 0)}, Clock: clk},
		SweepInterval: time.Millisecond}
	r := start(t, rules, o)
	assert.Equal(t, 3, r.admitted(t, 5, "edge", desc("remote_address", "10.0.0.1")), "per-ip allows 3 a minute")
}

// TestBackendsAreSweepers: the three backends of package service release
// their idle limiters at the server's sweep (service.Sweeper). It catches
// a backend losing its Sweep, which the server would then skip without a
// word.
func TestBackendsAreSweepers(t *testing.T) {
	for _, b := range []service.Backend{service.NewLocal(nil, 0), service.NewRedis(nil, service.RedisOptions{}),
		service.NewBudget(service.BudgetOptions{})} {
		_, ok := b.(service.Sweeper)
		assert.True(t, ok, "%s backend", b.Name())
	}
}
