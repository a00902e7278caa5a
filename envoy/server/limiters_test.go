package server_test

import (
	"os"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/service"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const twoLimits = `
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 3}
  - key: client
    rate_limit: {unit: minute, requests_per_unit: 7}
`

// TestLimitersOfDroppedRulesReleased: the configuration's limiters are
// kept; a limit override's limiter and, after a reload, the limiter of a
// rule the new configuration dropped are released once idle, which
// /metrics shows (edgelimit_envoy_limiters, ..._released_total). It
// catches a reload that keeps the old configuration's limits, a
// configuration limiter released for idleness, and a gauge that does not
// follow the pool.
func TestLimitersOfDroppedRulesReleased(t *testing.T) {
	clk := core.NewManualClock(t0)
	r := start(t, twoLimits, localOpts(clk))
	d := desc("remote_address", "10.0.0.1")
	d.Limit = &commonv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 50, Unit: typev3.RateLimitUnit_MINUTE}
	r.ask(t, "edge", 0, d)
	r.ask(t, "edge", 0, desc("client", "a"))
	body := scrape(t, r)
	assert.Contains(t, body, `edgelimit_envoy_limiters{kept="true"} 2`)
	assert.Contains(t, body, `edgelimit_envoy_limiters{kept="false"} 1`, "the override's")

	require.NoError(t, os.WriteFile(r.cfgPath, []byte(`
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 3}
`), 0o600))
	changed, err := r.srv.Reload()
	require.NoError(t, err)
	require.True(t, changed)
	body = scrape(t, r)
	assert.Contains(t, body, `edgelimit_envoy_limiters{kept="true"} 1`)
	assert.Contains(t, body, `edgelimit_envoy_limiters{kept="false"} 2`, "the override's and the dropped rule's, until idle")

	clk.Advance(service.DefaultIdle)
	r.ask(t, "edge", 0, desc("remote_address", "10.0.0.2")) // a look for idle limiters
	body = scrape(t, r)
	assert.Contains(t, body, `edgelimit_envoy_limiters{kept="true"} 1`)
	assert.Contains(t, body, `edgelimit_envoy_limiters{kept="false"} 0`)
	assert.Contains(t, body, `edgelimit_envoy_limiters_released_total 2`)
}
