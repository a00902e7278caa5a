package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// popSim runs the command in process and returns its exit status, stdout
// and stderr.
func popSim(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestBadFlagsFailFastWithOneLine(t *testing.T) {
	for _, args := range [][]string{
		{"-pops", "0"},
		{"-scenario", "article", "-pops", "0"},
		{"-scenario", "article", "-requests", "0"},
		{"-identities", "-5"},
		{"-requests", "-1"},
		{"-limit", "0"},
		{"-window", "0s"},
		{"-window", "1500us"}, // not whole ms: refused before any trace is made
		{"-mode", "sideways"},
		{"-scenario", "stampede"},
		{"-redis-addr", "127.0.0.1:1"},
		{"-sync-interval", "-1s"},
		{"-free-credit", "7"}, // 2 × 7 × 8 PoPs > 100
		{"-free-credit", "1", "-limit", "15"},
		{"-budget-pops", "-1"},
		{"-budget-pops", "some"},
		{"-budget-buckets", "-1"},
		{"-budget-buckets", "4294967296"},
		{"-free-credit", "4", "-budget-pops", "13"}, // 2 × 4 × 13 > 100
		{"-margin", "0.1"},
		{"-sweep", "colour=red"},
		{"-sweep", "sync-interval=10ms,soon"},
		{"-plot", "x.png"},
		{"-pops", "many"},
		{"-clock-skew", "-1s"},
		{"-clock-skew", "soon"},
		{"-redis-cluster", "-redis-addr", "127.0.0.1:1"},
		{"-scenario", "article", "-redis-cluster"},
		{"-scenario", "article", "-redis-addr", "127.0.0.1:1,127.0.0.1:2"},
		{"-redis-addr", "127.0.0.1:1,127.0.0.1:2"},
		{"-sweep", "clock-skew=-1s"},
		{"-no-such-flag"},
		{"extra"},
		{"-network", "perfect"},
		{"-jitter", "-1"},
		{"-redis-outage", "20s"},
		{"-redis-loss", "-5s"},
		{"-redis-loss", "soon"},
		{"-redis-loss", "30s", "-redis-addr", "127.0.0.1:1"},
		{"-redis-loss", "30s", "-redis-cluster"},
		{"-partition", "9@1s+1s"},
		{"-crash", "x@1s"},
		{"-gossip-loss", "2"},
		{"-network", "ideal", "-crash", "1@1s"},
		{"-network", "ideal", "-mode", "budget"},
		{"-network", "ideal", "-mode", "redis", "-sweep", "sync-interval=10ms"},
		{"-parallel", "0"},
		{"-worst", "-1"},
	} {
		code, out, errOut := popSim(t, args...)
		assert.False(t, code != 2 || out != "", "%v: exit %d, stdout %q; want 2 and nothing", args, code, out)
		assert.False(t, !strings.HasPrefix(errOut, "pop-sim: ") || strings.Count(errOut, "\n") != 1, "%v: stderr %q, want one line", args, errOut)
	}
}

// smallRun is a run small enough for the tests, on the test's Redis.
func smallRun(addr string, extra ...string) []string {
	return append([]string{"-redis-addr", addr, "-pops", "3", "-identities", "200",
		"-requests", "3000", "-limit", "10", "-window", "1s", "-seed", "5", "-json"}, extra...)
}

type jsonReport struct {
	Scenario   string           `json:"scenario"`
	Seed       uint64           `json:"seed"`
	PoPs       int              `json:"pops"`
	Identities int              `json:"identities"`
	Requests   int              `json:"requests"`
	Results    []map[string]any `json:"results"`
	Notes      []string         `json:"notes"`
}

func decode(t *testing.T, out string) jsonReport {
	t.Helper()
	var r jsonReport
	err := json.Unmarshal([]byte(out), &r)
	require.NoError(t, err, "bad JSON %v:\n%s", err, out)
	return r
}

// TestSameSeedSameFigures runs the same flags twice, each run on its own
// private Redis (as without -redis-addr), so even the one EVAL each script
// costs on a fresh server is repeated.
func TestSameSeedSameFigures(t *testing.T) {
	var runs []jsonReport
	for range 2 {
		p := redistest.Start(t)
		code, out, errOut := popSim(t, smallRun(p.Addr)...)
		require.EqualValues(t, 0, code, "exit %d: %s", code, errOut)
		runs = append(runs, decode(t, out))
	}
	for _, r := range runs {
		for _, res := range r.Results {
			dropMachine(res)
		}
	}
	a, _ := json.Marshal(runs[0])
	b, _ := json.Marshal(runs[1])
	require.True(t, bytes.Equal(a, b), "two runs of one seed differ:\n%s\n%s", a, b)
	require.NotEqualValues(t, 0, len(runs[0].Results), "no results")
}

// machineFields are a result's measurements of the machine that ran it
// (time, memory, Redis' own counters), not figures of the simulation.
var machineFields = []string{"wall_seconds", "peak_rss_mb", "redis_load", "memory"}

func dropMachine(res map[string]any) {
	for _, f := range machineFields {
		delete(res, f)
	}
}

var resultFields = []string{"mode", "decisions", "allowed", "denied", "false_allows",
	"false_denies", "decision_error_pct", "max_overadmission", "p99_overadmission",
	"redis_round_trips", "round_trips_per_decision", "round_trips_saved_pct",
	"nats_messages", "nats_bytes", "added_latency_p50_ms", "added_latency_p99_ms", "wall_seconds", "peak_rss_mb"}

func TestJSONFieldsAndModeFigures(t *testing.T) {
	p := redistest.Start(t)
	code, out, errOut := popSim(t, smallRun(p.Addr, "-mode", "all")...)
	require.EqualValues(t, 0, code, "exit %d: %s", code, errOut)
	r := decode(t, out)
	require.False(t, r.Scenario != "mixed" || r.Seed != 5 || r.PoPs != 3 || r.Identities != 200 || r.Requests != 3000, "header %+v", r)
	byMode := map[string]map[string]any{}
	for _, res := range r.Results {
		for _, f := range resultFields {
			assert.Contains(t, res, f, "result %v lacks %s", res["mode"], f)
		}
		byMode[res["mode"].(string)] = res
	}
	rd := byMode["redis"]
	assert.False(t, rd == nil || rd["round_trips_per_decision"] != 1.0 || rd["round_trips_saved_pct"] != 0.0, "redis row %v: want one round trip per decision", rd)
	lc := byMode["local"]
	assert.False(t, lc == nil || lc["redis_round_trips"] != 0.0 || lc["max_overadmission"].(float64) < 1.5, "local row %v: want no round trips and over-admission of spread attackers", lc)
}

func TestArticleJSON(t *testing.T) {
	p := redistest.Start(t)
	// Table B on 1,000 requests and 5,000 identities keeps the test short;
	// the defaults are the article's 10,000 and 100,000.
	code, out, errOut := popSim(t, "-scenario", "article", "-json", "-redis-addr", p.Addr,
		"-requests", "1000", "-identities", "5000")
	require.EqualValues(t, 0, code, "exit %d: %s", code, errOut)
	var r struct {
		Boundary map[string]float64 `json:"boundary"`
		Memory   map[string]float64 `json:"memory"`
	}
	err := json.Unmarshal([]byte(out), &r)
	require.NoError(t, err)
	b, m := r.Boundary, r.Memory
	require.False(t, b["limit"] != 100 || b["fixed"] != 200 || b["log"] != 100 || b["sliding"] < 100 || b["sliding"] > 105, "boundary %v: want limit 100, fixed 200, log 100, sliding 100..105", b)
	for _, f := range []string{"log_bytes", "sliding_bytes", "ratio", "used_memory_per_identity", "used_memory_per_identity_two_key"} {
		assert.Positive(t, m[f], "memory.%s = %v, want > 0", f, m[f])
	}
	assert.GreaterOrEqual(t, m["ratio"], 100.0, "log / sliding ratio %v, want hundreds or more", m["ratio"])
}

func TestSweepWritesCSVAndPlot(t *testing.T) {
	p := redistest.Start(t)
	dir := t.TempDir()
	csvPath, pngPath := filepath.Join(dir, "s.csv"), filepath.Join(dir, "s.png")
	args := smallRun(p.Addr, "-mode", "budget", "-sweep", "sync-interval=50ms,500ms",
		"-csv", csvPath, "-plot", pngPath)
	code, out, errOut := popSim(t, args...)
	require.EqualValues(t, 0, code, "exit %d: %s", code, errOut)
	var r struct {
		Sweep []struct {
			Param, Value string
		} `json:"sweep"`
	}
	err := json.Unmarshal([]byte(out), &r)
	require.False(t, err != nil || len(r.Sweep) != 2 || r.Sweep[1].Value != "500ms", "sweep JSON %+v, %v", r, err)
	data, err := os.ReadFile(csvPath)
	require.False(t, err != nil || strings.Count(string(data), "\n") != 4 || !strings.Contains(string(data), "\nreference,,,"), "csv %q, %v: want a header, 2 points and the reference", data, err)
	img, err := os.ReadFile(pngPath)
	require.False(t, err != nil || !bytes.HasPrefix(img, []byte("\x89PNG")), "no PNG: %v", err)
}

// TestHelpPrintsEveryFlag: -h prints every flag with its default on stdout
// and exits 0 (it used to print "flag: help requested" and exit 2).
func TestHelpPrintsEveryFlag(t *testing.T) {
	for _, arg := range []string{"-h", "-help"} {
		code, out, errOut := popSim(t, arg)
		require.False(t, code != 0 || errOut != "", "%s: exit %d, stderr %q; want 0 and nothing", arg, code, errOut)
		for _, f := range []string{"-scenario", "-network", "-jitter", "-redis-outage", "-redis-loss", "-partition", "-crash",
			"-gossip-loss", "-gossip-dup", "-sync-interval", "-free-credit", "-trace", "(default 0.2)"} {
			assert.True(t, strings.Contains(out, f), "%s: no %q in:\n%s", arg, f, out)
		}
	}
}
