package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/edgelimit/edgelimit/internal/redistest"
)

// sizes are smallRun's scenario flags, -identities and -requests being the
// ones -trace refuses.
var sizes = []string{"-identities", "200", "-requests", "3000"}

// judged are a run's figures: every result but its machine's
// measurements (machineFields).
func judged(t *testing.T, out string) (jsonReport, string) {
	t.Helper()
	r := decode(t, out)
	for _, res := range r.Results {
		dropMachine(res)
	}
	b, _ := json.Marshal(r.Results)
	return r, string(b)
}

// TestWrittenTraceReplaysToTheSameFigures: a scenario written with
// -write-trace (CSV and JSON Lines) records its seed, and replayed with
// -trace, with or without -seed, gives every mode the figures of the
// scenario itself, on the same Redis; -seed replaces the file's seed.
func TestWrittenTraceReplaysToTheSameFigures(t *testing.T) {
	p := redistest.Start(t)
	args := smallRun(p.Addr, sizes...) // smallRun's own sizes are these too; seed 5, not the default 1
	code, out, errOut := popSim(t, args...)
	require.Zero(t, code, "scenario: exit status; stderr %s", errOut)
	want, wantFigures := judged(t, out)
	for _, name := range []string{"t.csv", "t.jsonl"} {
		path := filepath.Join(t.TempDir(), name)
		code, out, errOut = popSim(t, "-pops", "3", "-identities", "200", "-requests", "3000",
			"-limit", "10", "-window", "1s", "-seed", "5", "-write-trace", path)
		require.Zero(t, code, "-write-trace %s: exit status; stderr %s", name, errOut)
		require.True(t, strings.HasPrefix(out, "wrote 3000 requests of mixed"), "-write-trace %s: %q", name, out)
		for _, seed := range [][]string{{"-seed", "5"}, nil} {
			replay := append([]string{"-redis-addr", p.Addr, "-trace", path, "-limit", "10", "-window", "1s", "-json"}, seed...)
			code, out, errOut = popSim(t, replay...)
			require.Zero(t, code, "-trace %s %v: exit status; stderr %s", name, seed, errOut)
			got, gotFigures := judged(t, out)
			assert.Equal(t, want.Requests, got.Requests, "-trace %s %v: requests", name, seed)
			assert.Equal(t, want.PoPs, got.PoPs, "-trace %s %v: PoPs", name, seed)
			assert.Equal(t, "trace:"+name, got.Scenario, "-trace %s %v: scenario", name, seed)
			assert.EqualValues(t, 5, got.Seed, "-trace %s %v: the seed the file records (or -seed 5)", name, seed)
			assert.Equal(t, wantFigures, gotFigures, "-trace %s %v: figures against the scenario's", name, seed)
		}
		code, out, errOut = popSim(t, "-redis-addr", p.Addr, "-trace", path, "-limit", "10", "-window", "1s",
			"-seed", "6", "-mode", "local", "-json")
		require.Zero(t, code, "-trace %s -seed 6: exit status; stderr %s", name, errOut)
		got, _ := judged(t, out)
		assert.EqualValues(t, 6, got.Seed, "-trace %s: -seed 6 replaces the file's seed", name)
	}
}

// TestSampleTraceReplays replays the sample that ships with the repository
// through every mode.
func TestSampleTraceReplays(t *testing.T) {
	p := redistest.Start(t)
	code, out, errOut := popSim(t, "-redis-addr", p.Addr, "-trace", sample, "-limit", "20", "-window", "1s")
	require.EqualValues(t, 0, code, "exit %d: %s", code, errOut)
	for _, want := range []string{"scenario trace:sample.csv, seed 1: 4 PoPs,", "note: trace: replayed from", "budget"} {
		assert.True(t, strings.Contains(out, want), "table lacks %q:\n%s", want, out)
	}
}

// sample is the sample trace shipped in the repository.
var sample = filepath.Join("..", "..", "sim", "traffic", "testdata", "sample.csv")

// TestBadTraceFilesFailFastWithOneLine: every bad file ends with one line
// naming the file and the line, and exit status 2, before any server is
// contacted (-redis-addr names a closed port, so reaching it would fail
// differently).
func TestBadTraceFilesFailFastWithOneLine(t *testing.T) {
	dir := t.TempDir()
	head := "# edgelimit-trace v1\nt_ms,identity,pop,weight\n"
	for _, tc := range []struct{ name, file, want string }{
		{"unsorted.csv", head + "2,a,0,1\n1,a,0,1\n", "unsorted.csv: line 4: t_ms 1 is before"},
		{"pop.csv", head + "1,a,8,1\n", "pop.csv: line 3: unknown PoP 8"},
		{"negative.csv", head + "1,a,0,-1\n", "negative.csv: line 3: weight -1 is negative"},
		{"heavy.csv", head + "1,a,0,101\n", "heavy.csv: line 3: weight 101 is above the limit 100"},
		{"truncated.csv", head + "1,a,0,1\n2,a,\n", "truncated.csv: line 4: 3 fields, want 4"},
		{"truncated.jsonl", `{"edgelimit_trace":"v1"}` + "\n" + `{"t_ms":1,"iden`, "truncated.jsonl: line 2: not a request object"},
		{"nan.csv", head + "x,a,0,1\n", `nan.csv: line 3: t_ms "x" is not a number`},
		{"empty.csv", "", "empty.csv: line 1: empty file"},
		{"v2.csv", "# edgelimit-trace v2\n", `v2.csv: line 1: unknown version "v2"`},
		{"trace.txt", head + "1,a,0,1\n", "unknown format"},
	} {
		path := filepath.Join(dir, tc.name)
		err := os.WriteFile(path, []byte(tc.file), 0o644)
		require.NoError(t, err)
		code, out, errOut := popSim(t, "-trace", path)
		assert.Equal(t, 2, code, "%s: exit status; stderr %q", tc.name, errOut)
		assert.Empty(t, out, "%s: stdout", tc.name)
		assert.True(t, strings.HasPrefix(errOut, "pop-sim: ") && strings.Count(errOut, "\n") == 1,
			"%s: stderr %q, want one line led by pop-sim:", tc.name, errOut)
		assert.Contains(t, errOut, tc.want, "%s: what stderr says", tc.name)
	}
}

func TestTraceFlagConflictsFailFast(t *testing.T) {
	for _, args := range [][]string{
		{"-trace", sample, "-scenario", "pinned"},
		{"-trace", sample, "-identities", "5"},
		{"-trace", sample, "-requests", "5"},
		{"-trace", sample, "-rate", "400"},
		{"-trace", sample, "-pops", "8"}, // the sample declares 4
		{"-trace", sample, "-write-trace", "x.csv"},
		{"-write-trace", "x.txt"},
		{"-scenario", "article", "-write-trace", "x.csv"},
		{"-scenario", "article", "-rate", "400"},
	} {
		code, out, errOut := popSim(t, args...)
		assert.False(t, code != 2 || out != "" || strings.Count(errOut, "\n") != 1, "%v: exit %d, stdout %q, stderr %q; want 2, nothing, one line", args, code, out, errOut)
	}
}

// requestLine matches a request line of a written CSV trace.
var requestLine = regexp.MustCompile(`(?m)^[0-9.]+,id[0-9]+,[0-9]+,1,[a-z-]+$`)

// TestWriteTraceNeedsNoServer: -write-trace writes and exits without
// starting or reaching Redis.
func TestWriteTraceNeedsNoServer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	code, out, errOut := popSim(t, "-requests", "500", "-rate", "25", "-window", "1s", "-write-trace", path)
	require.False(t, code != 0 || out != "wrote 500 requests of mixed (8 PoPs, 2.5s) to "+path+"\n", "exit %d, %q, %s", code, out, errOut)
	data, err := os.ReadFile(path)
	require.False(t, err != nil || !bytes.HasPrefix(data, []byte("# edgelimit-trace v1\n")) || len(requestLine.FindAll(data, -1)) != 500, "file %.200q, %v; want the header and 500 requests", data, err)
}
