package server_test

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/config"
	"github.com/edgelimit/edgelimit/envoy/server"
	"github.com/edgelimit/edgelimit/envoy/service"
	"github.com/edgelimit/edgelimit/sim/natsembed"
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const slidingRules = `
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 10}
`

func hybridOpts(t *testing.T, pop, redisAddr, natsURL string, clk core.Clock, margin float64) server.Options {
	t.Helper()
	nc, err := gossip.Connect(natsURL)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	b := service.NewHybrid(service.HybridOptions{PoP: pop, Redis: redisClient(t, redisAddr), NATS: nc, Margin: margin, Clock: clk})
	return server.Options{Service: service.Options{Backend: b, Clock: clk}}
}

func startNATS(t *testing.T) *natsembed.Server {
	t.Helper()
	ns, err := natsembed.Start()
	require.NoError(t, err)
	t.Cleanup(ns.Stop)
	return ns
}

// TestHybridAcrossInstances: two instances whose margin sends every request
// near the limit to Redis share one limit exactly.
func TestHybridAcrossInstances(t *testing.T) {
	rs := startRedis(t)
	ns := startNATS(t)
	clk := core.NewManualClock(t0)
	a := start(t, slidingRules, hybridOpts(t, "pop-a", rs.Addr, ns.URL(), clk, 0.99))
	b := start(t, slidingRules, hybridOpts(t, "pop-b", rs.Addr, ns.URL(), clk, 0.99))
	got := 0
	for i := range 30 {
		r := a
		if i%2 == 1 {
			r = b
		}
		if r.ask(t, "edge", 0, desc("remote_address", "10.0.0.1")).OverallCode == ok {
			got++
		}
	}
	assert.Equal(t, 10, got, "with margin 0.99 every decision is made at Redis, so the two instances admit the limit exactly")
}

// TestHybridShutdownFlushes: a single instance deciding locally (margin
// 0.1) writes its counts to Redis when it shuts down.
func TestHybridShutdownFlushes(t *testing.T) {
	rs := startRedis(t)
	ns := startNATS(t)
	clk := core.NewManualClock(t0)
	o := hybridOpts(t, "pop-a", rs.Addr, ns.URL(), clk, 0.1)
	srv, err := server.New(withConfig(t, o, slidingRules))
	require.NoError(t, err)
	d, err := srv.Service().ShouldRateLimit(context.Background(), req("edge", desc("remote_address", "10.0.0.7")))
	require.NoError(t, err)
	require.Equal(t, ok, d.OverallCode)
	require.NoError(t, srv.Shutdown(context.Background()))
	keys, err := rs.Client().Keys(context.Background(), "*").Result()
	require.NoError(t, err)
	assert.NotEmpty(t, keys, "the local decision reached Redis at shutdown")
}

func TestHybridRefusesOtherAlgorithms(t *testing.T) {
	rs := startRedis(t)
	o := server.Options{Service: service.Options{Backend: service.NewHybrid(service.HybridOptions{PoP: "p", Redis: redisClient(t, rs.Addr)})}}
	_, err := server.New(withConfig(t, o, "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 5, algorithm: fixed}\n"))
	require.Error(t, err, "the hybrid counts the sliding window only")
	assert.ErrorIs(t, err, config.ErrBadValue)
	assert.Contains(t, err.Error(), "descriptors[0].rate_limit: bad value: the hybrid backend cannot enforce it")
	_ = o.Service.Backend.Close(context.Background())
}
