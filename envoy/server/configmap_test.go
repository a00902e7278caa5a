package server_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigMapDirectoryServesAndReloads: a configuration directory laid
// out as a mounted Kubernetes ConfigMap (rules.yaml → ..data/rules.yaml,
// ..data → a timestamped directory) is served, and swapping ..data to a
// new timestamped directory, as the kubelet does on an update, is reloaded.
// It catches the directory's symlinked files being skipped (the server
// refused to start: no configuration files).
func TestConfigMapDirectoryServesAndReloads(t *testing.T) {
	dir := t.TempDir()
	version := func(stamp, rpu string) {
		require.NoError(t, os.Mkdir(filepath.Join(dir, stamp), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, stamp, "rules.yaml"),
			[]byte("domain: edge\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: "+rpu+"}\n"), 0o600))
		tmp := filepath.Join(dir, "..data_tmp")
		require.NoError(t, os.Symlink(stamp, tmp))
		require.NoError(t, os.Rename(tmp, filepath.Join(dir, "..data")), "the atomic swap of ..data")
	}
	version("..2026_12_06_08_00_00.000000001", "1")
	require.NoError(t, os.Symlink(filepath.Join("..data", "rules.yaml"), filepath.Join(dir, "rules.yaml")))

	o := localOpts(core.NewManualClock(t0))
	o.ConfigPath = dir
	r := start(t, "", o)
	require.Equal(t, 1, r.admitted(t, 3, "edge", desc("k", "v")), "the ConfigMap's 1 a minute")

	version("..2026_12_06_08_05_00.000000002", "5")
	changed, err := r.srv.Reload()
	require.NoError(t, err)
	assert.True(t, changed, "the swap of ..data is a change")
	assert.Equal(t, 5, r.admitted(t, 6, "edge", desc("k", "w")), "the new 5 a minute is in force")
}
