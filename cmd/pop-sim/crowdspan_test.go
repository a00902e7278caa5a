package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCrowdSpanSweepRunsEveryMode: -sweep crowd-span runs every listed
// mode, pure Redis and local too, at each span on a trace of its own, and
// writes the CSV and the over-admission plot; the crowd's span changes
// what local admits nowhere (each PoP alone counts the same requests) and
// the reference's row is left out (it differs from point to point).
func TestCrowdSpanSweepRunsEveryMode(t *testing.T) {
	dir := t.TempDir()
	csvPath, pngPath := filepath.Join(dir, "s.csv"), filepath.Join(dir, "s.png")
	for _, parallel := range []string{"1", "2"} {
		r := decodeRun(t, privateRun("-scenario", "flash-crowd", "-mode", "redis,local,budget",
			"-sweep", "crowd-span=50ms,1s", "-csv", csvPath, "-plot", pngPath, "-parallel", parallel)...)
		assert.Empty(t, r.Results, "-parallel %s: no mode runs once", parallel)
		var got []string
		over := map[string]float64{}
		for _, pt := range r.Sweep {
			got = append(got, pt["mode"].(string)+" "+pt["value"].(string))
			res := pt["result"].(map[string]any)
			over[pt["mode"].(string)+" "+pt["value"].(string)] = res["max_overadmission"].(float64)
		}
		assert.Equal(t, []string{"redis 50ms", "redis 1s", "local 50ms", "local 1s", "budget 50ms", "budget 1s"}, got,
			"-parallel %s: every mode at every span", parallel)
		assert.Equal(t, over["local 50ms"], over["local 1s"], "-parallel %s: local's worst over-admission does not depend on when the crowd arrives", parallel)
		assert.Equal(t, 1.0, over["redis 50ms"], "-parallel %s: pure Redis holds a crowd arriving in 50 ms to the limit", parallel)
		assert.Greater(t, over["local 50ms"], over["redis 50ms"], "-parallel %s: PoPs alone pass it beyond", parallel)
		f, err := os.Open(csvPath)
		require.NoError(t, err, "the CSV")
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		require.NoError(t, err, "reading the CSV")
		assert.Len(t, rows, 7, "-parallel %s: a header and 6 points, no reference line", parallel)
		img, err := os.ReadFile(pngPath)
		require.NoError(t, err, "the plot")
		assert.True(t, bytes.HasPrefix(img, []byte("\x89PNG")), "a PNG")
	}
}

// TestCrowdSpanFlagsRefused: -crowd-span and the crowd-span sweep need the
// flash-crowd scenario and spans that end within the trace.
func TestCrowdSpanFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-crowd-span", "1s"}, "flash-crowd"},
		{[]string{"-sweep", "crowd-span=1s"}, "flash-crowd"},
		{[]string{"-scenario", "flash-crowd", "-crowd-span", "59s"}, "crowd-span 59s: longer than"},
		{[]string{"-scenario", "flash-crowd", "-crowd-span", "-1s"}, "crowd-span -1s"},
		{[]string{"-scenario", "flash-crowd", "-sweep", "crowd-span=1s,59s"}, "sweep crowd-span=59s"},
		{[]string{"-scenario", "flash-crowd", "-sweep", "crowd-span=0"}, "bad value"},
	} {
		code, out, errOut := popSim(t, tc.args...)
		assert.Equal(t, 2, code, "%v: exit status", tc.args)
		assert.Empty(t, out, "%v: nothing on stdout", tc.args)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "%v: one line on stderr: %q", tc.args, errOut)
		assert.Contains(t, errOut, tc.want, "%v: what is wrong", tc.args)
	}
}
