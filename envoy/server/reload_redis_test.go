package server_test

import (
	"os"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReloadChangedLimitCountsAfreshOnRedis: on the Redis backend, as on
// the local one, a reload that changes a rule's requests_per_unit starts
// its counts afresh, since the Redis keys name the limit: after 1 of 1 a
// minute was spent, the new 5 a minute admits 5, not 4. It pins what
// envoy/README.md says of a changed limit; a change of key layout that
// carried the count over would fail it.
func TestReloadChangedLimitCountsAfreshOnRedis(t *testing.T) {
	rs := startRedis(t)
	clk := core.NewManualClock(t0)
	r := start(t, "domain: edge\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 1}\n",
		redisOpts(redisClient(t, rs.Addr), clk, false))
	require.Equal(t, 1, r.admitted(t, 3, "edge", desc("k", "v")), "the first configuration allows 1 a minute")
	require.NoError(t, os.WriteFile(r.cfgPath, []byte("domain: edge\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 5}\n"), 0o600))
	changed, err := r.srv.Reload()
	require.NoError(t, err)
	require.True(t, changed)
	assert.Equal(t, 5, r.admitted(t, 6, "edge", desc("k", "v")), "5 a minute counted afresh at Redis")
}
