package traffic

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recipe finds the access-log recipe of docs/trace-format.md: the shell
// command from "sort" to "> mine.csv".
var recipe = regexp.MustCompile(`(?s)\nsort -n .*?> mine\.csv`)

// TestAccessLogRecipe runs the documented recipe on five log lines of three
// PoPs and reads what it makes.
func TestAccessLogRecipe(t *testing.T) {
	for _, tool := range []string{"sh", "sort", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "trace-format.md"))
	require.NoError(t, err)
	cmd := recipe.Find(doc)
	require.NotNil(t, cmd, "docs/trace-format.md has no recipe from sort to > mine.csv")
	dir := t.TempDir()
	logs := map[string]string{
		"fra.log": "1764763200.412 203.0.113.7 fra\n1764763201.377 203.0.113.7 fra\n",
		"iad.log": "1764763200.413 198.51.100.23 iad\n1764763200.950 203.0.113.7 iad\n",
		"sin.log": "1764763201.002 2001:db8::5 sin\n",
	}
	for name, text := range logs {
		err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
		require.NoError(t, err)
	}
	sh := exec.Command("sh", "-c", strings.TrimSpace(string(cmd)))
	sh.Dir = dir
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "recipe: %v: %s", err, out)
	f, err := os.Open(filepath.Join(dir, "mine.csv"))
	require.NoError(t, err)
	defer f.Close()
	tr, err := ReadTrace(f, CSV, ReadOptions{PoPs: 8, Limit: 100, Window: time.Second})
	require.NoError(t, err)
	ms := time.Millisecond
	want := []Request{{0, 0, 0, 1}, {1 * ms, 1, 1, 1}, {538 * ms, 0, 1, 1}, {590 * ms, 2, 2, 1}, {965 * ms, 0, 0, 1}}
	require.False(t, !reflect.DeepEqual(tr.Requests, want) || tr.Config.PoPs != 3, "recipe made %+v at %d PoPs, want %+v at 3", tr.Requests, tr.Config.PoPs, want)
}
