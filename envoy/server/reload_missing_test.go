package server_test

import (
	"os"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReloadMissingFileReportedOnce: a configuration file that disappears
// is reported once (an error, OnReload, config_loads_total{result="error"}),
// like a bad file, and the previous configuration stays in force; the next
// checks of the same missing file see no change, and the file's return is
// reloaded. It catches a missing file being reloaded, logged and counted
// as an error at every check (every -reload-interval) until it returns.
func TestReloadMissingFileReportedOnce(t *testing.T) {
	reloaded := make(chan error, 8)
	o := localOpts(core.NewManualClock(t0))
	o.OnReload = func(err error) { reloaded <- err }
	r := start(t, "domain: edge\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 1}\n", o)
	require.NoError(t, os.Remove(r.cfgPath))

	changed, err := r.srv.Reload()
	assert.True(t, changed, "the file's disappearance is a change")
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorIs(t, <-reloaded, os.ErrNotExist)
	for i := range 3 {
		changed, err = r.srv.Reload()
		assert.False(t, changed, "check %d of the same missing file: no change", i)
		assert.NoError(t, err, "check %d: reported once already", i)
	}
	assert.Empty(t, reloaded, "OnReload called once for the missing file")
	assert.Contains(t, scrape(t, r), `edgelimit_envoy_config_loads_total{result="error"} 1`+"\n")
	assert.Equal(t, 1, r.admitted(t, 3, "edge", desc("k", "v")), "the previous 1 a minute stays in force")

	require.NoError(t, os.WriteFile(r.cfgPath, []byte("domain: edge\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 5}\n"), 0o600))
	changed, err = r.srv.Reload()
	require.NoError(t, err)
	assert.True(t, changed, "the file's return is a change")
	require.NoError(t, <-reloaded)
	assert.Equal(t, 5, r.admitted(t, 6, "edge", desc("k", "w")), "the returned file's 5 a minute")
}
