package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTraceFlagsCheckedAgainstTheTrace: with -trace, the flags that
// depend on the deployment's PoPs or the trace's length are checked
// against the file's, not -pops' default of 8 and the scenario's length:
// a crash or partition of a PoP the trace does not have, a free credit
// whose reservation passes the limit at the file's PoPs, and a Redis loss
// after the file's end are refused before any work, and a free credit
// that fits the file's 4 PoPs is accepted. It catches validating them
// only before the trace is read (a crash of a missing PoP then panicked
// the budget mode, a partition of one did nothing while the fault table
// named it, and the free credit was judged at 8 PoPs).
func TestTraceFlagsCheckedAgainstTheTrace(t *testing.T) {
	wide := filepath.Join(t.TempDir(), "wide.csv")
	err := os.WriteFile(wide, []byte("# edgelimit-trace v1\n# pops: 16\nt_ms,identity,pop,weight\n0,a,15,1\n"), 0o644)
	require.NoError(t, err)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-trace", sample, "-limit", "20", "-window", "1s", "-crash", "5@1s"}, "crash: PoP 5 of 4"},
		{[]string{"-trace", sample, "-limit", "20", "-window", "1s", "-partition", "4@1s+1s"}, "partition: PoP 4 of 4"},
		{[]string{"-trace", sample, "-limit", "20", "-window", "1s", "-redis-loss", "7s"}, "past the trace's end"},
		{[]string{"-trace", wide, "-limit", "40", "-free-credit", "2"}, "2 × 2 × 16 PoPs passes the limit of 40"},
		{[]string{"-redis-loss", "60s"}, "past the trace's end (1m0s)"}, // the scenario's 6 windows of 10 s
	} {
		_, err := parseFlags(tc.args)
		if !assert.Error(t, err, "%v accepted", tc.args) {
			continue // running it would start the work the flags should have stopped
		}
		assert.Contains(t, err.Error(), tc.want, "%v", tc.args)
		code, out, errOut := popSim(t, tc.args...)
		assert.False(t, code != 2 || out != "" || strings.Count(errOut, "\n") != 1, "%v: exit %d, stdout %q, stderr %q; want 2, nothing, one line", tc.args, code, out, errOut)
	}
	_, err = parseFlags([]string{"-trace", sample, "-limit", "20", "-window", "1s", "-free-credit", "2"})
	require.NoError(t, err, "free credit 2 at the sample's 4 PoPs: 2 × 2 × 4 = 16 fits the limit of 20")
	_, err = parseFlags([]string{"-trace", wide, "-crash", "12@0s", "-partition", "15@0s+1s"})
	require.NoError(t, err, "PoPs 12 and 15 of a trace of 16")
}
