package server_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/config"
	"github.com/edgelimit/edgelimit/envoy/server"
	"github.com/edgelimit/edgelimit/envoy/service"
	"github.com/edgelimit/edgelimit/sim/natsembed"
	"github.com/edgelimit/edgelimit/sync/budget"
	"github.com/edgelimit/edgelimit/sync/gossip"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slidingRules limit each remote address to 10 a minute, sliding window.
const slidingRules = `
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 10}
`

// budgetOpts is an instance of the budget backend, one of pops, on clk;
// its Sync loop runs every sync.
func budgetOpts(t *testing.T, pop, redisAddr string, pops int, clk core.Clock, sync time.Duration) server.Options {
	t.Helper()
	b := service.NewBudget(service.BudgetOptions{PoP: pop, Redis: redisClient(t, redisAddr), PoPs: pops, Clock: clk, Sync: sync})
	return server.Options{Service: service.Options{Backend: b, Clock: clk, Headers: true}}
}

// TestBudgetOneInstanceExact: one instance (PoPs 1) admits exactly the
// limit of an identity in a window and then answers OVER_LIMIT with the
// headers the service sets; another identity is not touched.
func TestBudgetOneInstanceExact(t *testing.T) {
	rs := startRedis(t)
	clk := core.NewManualClock(t0)
	r := start(t, slidingRules, budgetOpts(t, "pop-a", rs.Addr, 1, clk, time.Hour))
	got := r.admitted(t, 10, "edge", desc("remote_address", "10.0.0.1"))
	assert.Equal(t, 10, got, "the first 10 of a limit of 10 are admitted")
	resp := r.ask(t, "edge", 0, desc("remote_address", "10.0.0.1"))
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.OverallCode, "the 11th is over the limit")
	h := headers(resp)
	assert.NotEmpty(t, h["RateLimit"], "the RateLimit header on a denial: %v", h)
	assert.NotEmpty(t, h["Retry-After"], "and Retry-After: %v", h)
	assert.Equal(t, rlsv3.RateLimitResponse_OK, r.ask(t, "edge", 0, desc("remote_address", "10.0.0.2")).OverallCode, "another identity")
}

// TestBudgetAcrossInstances: two instances of one deployment (PoPs 2)
// asked in turn share one limit: no Sync runs during the test (the loop's
// interval is an hour), so every grant, report and free unit is decided by
// the requests themselves, and together they admit the limit exactly.
func TestBudgetAcrossInstances(t *testing.T) {
	rs := startRedis(t)
	clk := core.NewManualClock(t0)
	a := start(t, slidingRules, budgetOpts(t, "pop-a", rs.Addr, 2, clk, time.Hour))
	b := start(t, slidingRules, budgetOpts(t, "pop-b", rs.Addr, 2, clk, time.Hour))
	got := 0
	for i := range 30 {
		r := a
		if i%2 == 1 {
			r = b
		}
		if r.ask(t, "edge", 0, desc("remote_address", "10.0.0.1")).OverallCode == rlsv3.RateLimitResponse_OK {
			got++
		}
	}
	assert.Equal(t, 10, got, "two instances asked in turn admit the limit of 10 exactly")
}

// TestBudgetConcurrentInstancesHoldTheLimit: three instances (PoPs 3),
// hammered at once by 12 clients × 20 requests of one identity within one
// window (a manual clock) with their Sync loops running, admit no more
// than the limit together, and admit some.
func TestBudgetConcurrentInstancesHoldTheLimit(t *testing.T) {
	rs := startRedis(t)
	clk := core.NewManualClock(t0)
	var rs3 []*running
	for _, pop := range []string{"pop-a", "pop-b", "pop-c"} {
		rs3 = append(rs3, start(t, slidingRules, budgetOpts(t, pop, rs.Addr, 3, clk, 10*time.Millisecond)))
	}
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for c := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rs3[c%3]
			for range 20 {
				resp, err := r.client.ShouldRateLimit(context.Background(), req("edge", desc("remote_address", "10.0.0.9")))
				if err == nil && resp.OverallCode == rlsv3.RateLimitResponse_OK {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, admitted.Load(), int64(10), "240 concurrent requests over 3 instances admit at most the limit of 10")
	assert.Positive(t, admitted.Load(), "and admit some")
}

// TestBudgetRefusesWhatItCannotEnforce: a rule of another algorithm fails
// the configuration with a message naming it.
func TestBudgetRefusesWhatItCannotEnforce(t *testing.T) {
	rs := startRedis(t)
	o := budgetOpts(t, "p", rs.Addr, 3, nil, 0)
	_, err := server.New(withConfig(t, o, "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 50, algorithm: fixed}\n"))
	require.Error(t, err, "a fixed-window rule is refused")
	assert.ErrorIs(t, err, config.ErrBadValue)
	assert.Contains(t, err.Error(), "the budget backend counts the sliding window only")
	assert.Contains(t, err.Error(), "the budget backend cannot enforce it")
	_ = o.Service.Backend.Close(context.Background())
}

// smallRules limit each remote address to 5 a second: under 2 × 3 PoPs, so
// the budget limiter runs it without free credit.
const smallRules = `
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: second, requests_per_unit: 5}
`

// TestBudgetSmallLimitAcrossInstances: a limit of 5 a second over three
// instances (PoPs 3), too small for each to hold a free unit per identity
// and window, runs without free credit: asked in turn, with no Sync during
// the test, they admit the limit exactly.
func TestBudgetSmallLimitAcrossInstances(t *testing.T) {
	rs := startRedis(t)
	clk := core.NewManualClock(t0)
	var rs3 []*running
	for _, pop := range []string{"pop-a", "pop-b", "pop-c"} {
		rs3 = append(rs3, start(t, smallRules, budgetOpts(t, pop, rs.Addr, 3, clk, time.Hour)))
	}
	got := 0
	for i := range 15 {
		if rs3[i%3].ask(t, "edge", 0, desc("remote_address", "10.0.0.1")).OverallCode == rlsv3.RateLimitResponse_OK {
			got++
		}
	}
	assert.Equal(t, 5, got, "three instances asked in turn admit the limit of 5 exactly")
}

func startNATS(t *testing.T) *natsembed.Server {
	t.Helper()
	ns, err := natsembed.Start()
	require.NoError(t, err)
	t.Cleanup(ns.Stop)
	return ns
}

// TestBudgetGossipsWithNATS: with BudgetOptions.NATS every limiter the
// backend builds subscribes to its namespace's gossip subject (a
// malformed payload published there reaches it and is counted); without
// it none does.
func TestBudgetGossipsWithNATS(t *testing.T) {
	rs := startRedis(t)
	ns := startNATS(t)
	nc, err := gossip.Connect(ns.URL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	var mu sync.Mutex
	lims := map[string]*budget.Limiter{}
	b := service.NewBudget(service.BudgetOptions{PoP: "pop-a", Redis: redisClient(t, rs.Addr), PoPs: 2, NATS: nc,
		OnLimiter: func(name string, l *budget.Limiter) { mu.Lock(); lims[name] = l; mu.Unlock() }})
	r := start(t, slidingRules, server.Options{Service: service.Options{Backend: b, Headers: true}})
	require.Equal(t, rlsv3.RateLimitResponse_OK, r.ask(t, "edge", 0, desc("remote_address", "10.0.0.1")).OverallCode, "the first request builds the limiter")
	mu.Lock()
	require.Len(t, lims, 1, "one limit, one limiter")
	var name string
	var lim *budget.Limiter
	for name, lim = range lims {
	}
	mu.Unlock()
	require.NoError(t, nc.Publish(budget.Subject(budget.Keyspace(name, lim.Limit())), []byte("not gossip")))
	require.NoError(t, nc.Flush())
	require.Eventually(t, func() bool { return lim.Stats().GossipMalformed == 1 }, time.Minute, 5*time.Millisecond,
		"the limiter of %s hears its subject (a minute bounds a hang only)", name)
}
