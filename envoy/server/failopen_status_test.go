package server_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFailOpenStatusHasNoCurrentLimit: with Redis down and the fail mode
// open, the descriptor's status carries no current_limit, so Envoy,
// which builds its X-RateLimit-* headers from the statuses that have one
// (the lowest limit_remaining), does not tell clients "0 remaining" while
// it lets every request through; a counted decision keeps it. It catches
// the fail-open status answered with current_limit, limit_remaining 0 and
// the wait to the window's end.
func TestFailOpenStatusHasNoCurrentLimit(t *testing.T) {
	r, rs := startFailMode(t, true)
	resp := r.ask(t, "edge", 0, desc("remote_address", "10.0.0.1"))
	require.NotNil(t, resp.Statuses[0].CurrentLimit, "Redis up: a counted decision names its limit")
	rs.Stop()
	resp = r.ask(t, "edge", 0, desc("remote_address", "10.0.0.1"))
	require.Equal(t, ok, resp.OverallCode, "fail open")
	assert.Nil(t, resp.Statuses[0].CurrentLimit, "a fail-open status names no limit it did not count against")
	assert.Nil(t, resp.Statuses[0].DurationUntilReset)
}
