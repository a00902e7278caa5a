package server_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFailModeDecisionsCarryNoRateLimitField: with Redis down, a fail-mode
// decision counted nothing and says nothing about the client's quota, so
// the response carries RateLimit-Policy but no RateLimit field, as the
// middleware does; a fail-closed denial still carries its Retry-After
// (redis.FailClosedRetry, 1 s). It catches a fail-open OK answered with
// "r=0" (telling a client that honours the field to stop until the
// window's end while every request is let through) and a fail-closed
// denial reported as the rule's quota spent.
func TestFailModeDecisionsCarryNoRateLimitField(t *testing.T) {
	for _, failOpen := range []bool{true, false} {
		r, rs := startFailMode(t, failOpen)
		h := headers(r.ask(t, "edge", 0, desc("remote_address", "10.0.0.1")))
		require.Equal(t, `"per-ip";r=2;t=51`, h["RateLimit"], "Redis up: the counted decision's field")
		rs.Stop()
		resp := r.ask(t, "edge", 0, desc("remote_address", "10.0.0.1"))
		h = headers(resp)
		assert.Equal(t, `"per-ip";q=3;w=60`, h["RateLimit-Policy"], "fail-open=%v: the policy still stands", failOpen)
		assert.NotContains(t, h, "RateLimit", "fail-open=%v: a fail-mode decision has no RateLimit field (%s)", failOpen, resp.OverallCode)
		if failOpen {
			assert.Equal(t, ok, resp.OverallCode)
			assert.NotContains(t, h, "Retry-After", "fail-open: admitted")
			continue
		}
		assert.Equal(t, over, resp.OverallCode)
		assert.Equal(t, "1", h["Retry-After"], "fail-closed: redis.FailClosedRetry")
	}
}
