package server_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hammer sends callers × each single-hit requests of one descriptor at once
// and returns how many were admitted, failing on any error.
func hammer(t *testing.T, r *running, callers, each int) int64 {
	t.Helper()
	var admitted atomic.Int64
	errs := make(chan error, callers)
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				resp, err := r.client.ShouldRateLimit(context.Background(), req("a", desc("k", "shared")))
				if err != nil {
					errs <- err
					return
				}
				if resp.OverallCode == ok {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	return admitted.Load()
}

const hundred = "domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 100}\n"

// TestConcurrentCallersLocal: 8 callers × 40 requests at once on one
// counter admit exactly the limit (a lost update would admit more).
func TestConcurrentCallersLocal(t *testing.T) {
	r := start(t, hundred, localOpts(core.NewManualClock(t0)))
	assert.Equal(t, int64(100), hammer(t, r, 8, 40), "320 concurrent requests against 100 a minute")
}

// TestConcurrentCallersRedis: the same against two instances on one Redis,
// each decision one atomic script.
func TestConcurrentCallersRedis(t *testing.T) {
	rs := startRedis(t)
	clk := core.NewManualClock(t0)
	a := start(t, hundred, redisOpts(redisClient(t, rs.Addr), clk, false))
	b := start(t, hundred, redisOpts(redisClient(t, rs.Addr), clk, false))
	var got [2]int64
	var wg sync.WaitGroup
	for i, r := range []*running{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = hammerNoRequire(r, 4, 40)
		}()
	}
	wg.Wait()
	require.GreaterOrEqual(t, got[0], int64(0), "instance a answered every call")
	require.GreaterOrEqual(t, got[1], int64(0), "instance b answered every call")
	assert.Equal(t, int64(100), got[0]+got[1], "320 concurrent requests over two instances against 100 a minute")
}

// hammerNoRequire is hammer for a goroutine other than the test's: −1 on
// any error.
func hammerNoRequire(r *running, callers, each int) int64 {
	var admitted atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				resp, err := r.client.ShouldRateLimit(context.Background(), req("a", desc("k", "shared")))
				if err != nil {
					failed.Store(true)
					return
				}
				if resp.OverallCode == ok {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() {
		return -1
	}
	return admitted.Load()
}
