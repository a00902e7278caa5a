package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// configMapDir lays dir out as Kubernetes mounts a ConfigMap: each file
// in a hidden, timestamped directory, "..data" a symlink to it, and each
// file's name at the top a symlink through "..data".
func configMapDir(t *testing.T, dir, stamp string, files map[string]string) {
	t.Helper()
	real := filepath.Join(dir, stamp)
	require.NoError(t, os.Mkdir(real, 0o700))
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(real, name), []byte(body), 0o600))
		require.NoError(t, os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)))
	}
	require.NoError(t, os.Symlink(stamp, filepath.Join(dir, "..data")))
}

// TestLoadConfigMapDirectory: a directory whose .yaml files are symlinks
// to regular files, as in a mounted Kubernetes ConfigMap, loads each of
// them as a domain; the hidden "..data" and timestamped directory are not
// read. It catches Files keeping regular files only, which found no file
// in such a directory (ErrNoFiles).
func TestLoadConfigMapDirectory(t *testing.T) {
	dir := t.TempDir()
	configMapDir(t, dir, "..2026_12_06_08_00_00.000000001", map[string]string{
		"edge.yaml": "domain: edge\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1}\n",
		"api.yml":   "domain: api\n",
	})
	s, err := Load(dir, Options{})
	require.NoError(t, err, "a ConfigMap directory must load")
	assert.Equal(t, []string{"api", "edge"}, s.Domains())
	assert.NotNil(t, s.Domain("edge").Match([]Entry{{"k", "v"}}))
}

// TestLoadDanglingSymlinkFails: a .yaml symlink whose target is missing is
// an error naming it, not a domain silently left out. It catches Files
// skipping what it cannot stat.
func TestLoadDanglingSymlinkFails(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("domain: a\n"), 0o600))
	require.NoError(t, os.Symlink("missing.yaml", filepath.Join(dir, "b.yaml")))
	_, err := Load(dir, Options{})
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "b.yaml")
}
