package service_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/config"
	"github.com/edgelimit/edgelimit/envoy/service"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sim/natsembed"
	"github.com/edgelimit/edgelimit/sync/gossip"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBudgetCancelledRPCIsNoOutage: the budget backend (FailClosed,
// one PoP) on a healthy Redis. Envoy gives up on one ShouldRateLimit (its
// filter's timeout cancels the RPC's context) while the decision is at
// Redis; the next RPC, of another identity, must be answered OK, not
// OVER_LIMIT as if Redis were down.
func TestBudgetCancelledRPCIsNoOutage(t *testing.T) {
	rs := redistest.Start(t)
	rdb, err := service.NewRedisClient(service.RedisClientOptions{Addrs: []string{rs.Addr}, Timeout: 2 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { rdb.Close() })
	clk := core.NewManualClock(time.Unix(1_700_000_010, 0))
	b := service.NewBudget(service.BudgetOptions{PoP: "a", Redis: rdb, PoPs: 1, FailClosed: true, Clock: clk, Sync: time.Hour})
	t.Cleanup(func() { b.Close(context.Background()) })
	s, err := service.New(service.Options{Backend: b, Clock: clk})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 10}
`), 0o600))
	set, err := config.Load(path, config.Options{})
	require.NoError(t, err)
	s.SetConfig(set)
	req := func(ip string) *rlsv3.RateLimitRequest {
		return &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*commonv3.RateLimitDescriptor{{
			Entries: []*commonv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: ip}}}}}
	}
	// each identity's first unit is its free credit; the next is decided at Redis
	for _, ip := range []string{"10.0.0.1", "10.0.0.2"} {
		resp, err := s.ShouldRateLimit(context.Background(), req(ip))
		require.NoError(t, err)
		require.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode)
	}

	gone, cancel := context.WithCancel(context.Background())
	cancel() // Envoy's timeout passed
	_, _ = s.ShouldRateLimit(gone, req("10.0.0.1"))

	resp, err := s.ShouldRateLimit(context.Background(), req("10.0.0.2"))
	require.NoError(t, err)
	assert.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode, "another identity's second unit, Redis healthy")
}

// TestBudgetDecidesWithoutGossip: gossip only spares round trips, so
// a NATS connection that cannot subscribe (here one closed after the
// backend was configured with it) must not leave a limit without
// decisions: ShouldRateLimit still answers from Redis, and OnGossipError
// says the limit runs without gossip.
func TestBudgetDecidesWithoutGossip(t *testing.T) {
	rs := redistest.Start(t)
	rdb, err := service.NewRedisClient(service.RedisClientOptions{Addrs: []string{rs.Addr}, Timeout: 2 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { rdb.Close() })
	ns, err := natsembed.Start()
	require.NoError(t, err)
	t.Cleanup(ns.Stop)
	nc, err := gossip.Connect(ns.URL())
	require.NoError(t, err)
	clk := core.NewManualClock(time.Unix(1_700_000_010, 0))
	var gossipErrs []string
	b := service.NewBudget(service.BudgetOptions{PoP: "a", Redis: rdb, PoPs: 1, Clock: clk, Sync: time.Hour, NATS: nc,
		OnGossipError: func(name string, err error) { gossipErrs = append(gossipErrs, name+": "+err.Error()) }})
	t.Cleanup(func() { b.Close(context.Background()) })
	nc.Close()
	s, err := service.New(service.Options{Backend: b, Clock: clk})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 10}
`), 0o600))
	set, err := config.Load(path, config.Options{})
	require.NoError(t, err)
	s.SetConfig(set)
	resp, err := s.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*commonv3.RateLimitDescriptor{{
		Entries: []*commonv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: "10.0.0.1"}}}}})
	require.NoError(t, err, "a limit is decided without gossip")
	assert.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode)
	assert.Len(t, gossipErrs, 1, "OnGossipError told once, for the one limit built: %q", gossipErrs)
}
