package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnwritableOutputIsAFlagError checks that a -csv or -plot path the
// run's end could not write (its directory missing, a directory itself,
// a plot without an image extension) is a bad flag: exit 2, one line,
// no report, nothing run, and no file left behind. It catches the check
// dropped from validate, which lets the run do all its work first and
// fail at the end (exit 1, the table printed, an empty plot file made).
func TestUnwritableOutputIsAFlagError(t *testing.T) {
	p := redistest.Start(t)
	dir := t.TempDir()
	small := []string{"-redis-addr", p.Addr, "-pops", "3", "-identities", "50", "-requests", "300",
		"-window", "1s", "-mode", "budget", "-sweep", "sync-interval=100ms", "-parallel", "1"}
	for _, c := range []struct{ flag, path, says string }{
		{"-csv", filepath.Join(dir, "missing", "t.csv"), "does not exist"},
		{"-plot", filepath.Join(dir, "missing", "t.png"), "does not exist"},
		{"-csv", dir, "not a regular file"},
		{"-plot", filepath.Join(dir, "curve"), "no image format"},
		{"-plot", filepath.Join(dir, "curve.txt"), "no image format"},
	} {
		code, out, errOut := popSim(t, append(append([]string(nil), small...), c.flag, c.path)...)
		assert.Equal(t, 2, code, "%s %s: exit status (stderr %q)", c.flag, c.path, errOut)
		assert.Empty(t, out, "%s %s: ran and printed a report", c.flag, c.path)
		assert.True(t, strings.HasPrefix(errOut, "pop-sim: "+c.flag+" ") && strings.Contains(errOut, c.says) &&
			strings.Count(errOut, "\n") == 1, "%s %s: stderr %q, want one line saying %q", c.flag, c.path, errOut, c.says)
	}
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, left, "files left behind")
}

// TestOutputCheckWritesNothing checks that checking -csv and -plot at
// startup neither creates a missing file nor truncates an existing one
// (they are written when the run ends, so a failed run leaves them as
// they were), nor leaves its probe behind. It catches a check that
// creates the file (os.Create) to test the path.
func TestOutputCheckWritesNothing(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.csv")
	require.NoError(t, os.WriteFile(old, []byte("an earlier sweep\n"), 0o644))
	_, err := parseFlags([]string{"-mode", "budget", "-sweep", "sync-interval=10ms,1s",
		"-csv", old, "-plot", filepath.Join(dir, "new.png")})
	require.NoError(t, err)
	got, err := os.ReadFile(old)
	require.NoError(t, err)
	assert.Equal(t, "an earlier sweep\n", string(got), "the existing CSV was changed")
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, left, 1, "files in the directory: %v", left)
}
