package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/redistest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// privateRun is smallRun without -redis-addr: the run starts its own
// servers, so -parallel can take effect.
func privateRun(extra ...string) []string {
	return append([]string{"-pops", "3", "-identities", "200", "-requests", "3000",
		"-limit", "10", "-window", "1s", "-seed", "5", "-json"}, extra...)
}

// runReport is the JSON report with its run figures.
type runReport struct {
	jsonReport
	Sweep []map[string]any `json:"sweep"`
	Run   struct {
		Parallel    int     `json:"parallel"`
		WallSeconds float64 `json:"wall_seconds"`
		PeakRSSMB   float64 `json:"peak_rss_mb"`
	} `json:"run"`
}

func decodeRun(t *testing.T, args ...string) runReport {
	t.Helper()
	code, out, errOut := popSim(t, args...)
	require.EqualValues(t, 0, code, "%v: exit %d: %s", args, code, errOut)
	var r runReport
	err := json.Unmarshal([]byte(out), &r)
	require.NoError(t, err, "bad JSON %v:\n%s", err, out)
	return r
}

// simulationFigures is a report's figures of the simulation alone, in
// JSON: the machine's measurements dropped (dropMachine).
func simulationFigures(t *testing.T, r runReport) []byte {
	t.Helper()
	for _, res := range r.Results {
		dropMachine(res)
	}
	for _, p := range r.Sweep {
		dropMachine(p["result"].(map[string]any))
	}
	b, err := json.Marshal([]any{r.jsonReport, r.Sweep})
	require.NoError(t, err)
	return b
}

// TestParallelGivesTheSequentialFigures: every mode, and a sweep, run two
// at a time in processes of their own give the figures of the same run
// one mode after the other, in the same order.
func TestParallelGivesTheSequentialFigures(t *testing.T) {
	for _, extra := range [][]string{nil, {"-mode", "redis,budget", "-sweep", "sync-interval=50ms,200ms"}} {
		seq := decodeRun(t, privateRun(append([]string{"-parallel", "1"}, extra...)...)...)
		par := decodeRun(t, privateRun(append([]string{"-parallel", "2"}, extra...)...)...)
		require.False(t, seq.Run.Parallel != 1 || par.Run.Parallel != 2, "%v: parallel %d and %d, want 1 and 2", extra, seq.Run.Parallel, par.Run.Parallel)
		assert.False(t, par.Run.WallSeconds <= 0 || par.Run.PeakRSSMB <= 0, "%v: run %+v, want its wall time and peak", extra, par.Run)
		for _, res := range par.Results {
			assert.False(t, res["redis_load"] == nil && res["mode"] != "local", "%v: %v has no redis load of its own server", extra, res["mode"])
		}
		a, b := simulationFigures(t, seq), simulationFigures(t, par)
		require.True(t, bytes.Equal(a, b), "%v: sequential and parallel figures differ:\n%s\n%s", extra, a, b)
		require.NotEqualValues(t, 0, len(seq.Results), "%v: no results", extra)
	}
}

// TestParallelFallsBackWithOneSharedRedis: with -redis-addr the modes run
// one after the other, whatever -parallel says.
func TestParallelFallsBackWithOneSharedRedis(t *testing.T) {
	p := redistest.Start(t)
	r := decodeRun(t, smallRun(p.Addr, "-parallel", "4", "-mode", "redis,local")...)
	require.False(t, r.Run.Parallel != 1 || len(r.Results) != 2, "run %+v with %d results, want parallel 1 and 2 results", r.Run, len(r.Results))
}

func TestWorkers(t *testing.T) {
	for _, c := range []struct {
		o    options
		jobs int
		want int
	}{
		{options{parallel: 2}, 4, 2},
		{options{parallel: 3}, 4, 3},
		{options{parallel: 8}, 4, 4},
		{options{parallel: 2}, 1, 1},
		{options{parallel: 1}, 4, 1},
		{options{parallel: 2, redisAddr: "127.0.0.1:6379"}, 4, 1},
		{options{parallel: 2, redisCluster: true}, 4, 1},
	} {
		got := c.o.workers(c.jobs)
		assert.EqualValues(t, c.want, got, "parallel %d, redis-addr %q, cluster %v, %d jobs: %d workers, want %d", c.o.parallel, c.o.redisAddr, c.o.redisCluster, c.jobs, got, c.want)
	}
}

// TestChildArgsOverrideTheUsers: a process gets the user's flags, then its
// job's, which the flag package lets win.
func TestChildArgsOverrideTheUsers(t *testing.T) {
	o, err := parseFlags([]string{"-mode", "all", "-sync-interval", "300ms", "-sweep", "sync-interval=50ms,200ms", "-plot", "x.png", "-cpuprofile", "cpu.out"})
	require.NoError(t, err)
	args := o.childArgs(job{o: o, mode: "budget", param: "sync-interval", value: "200ms"})
	c, err := parseFlags(args)
	require.NoError(t, err, "%v: %v", args, err)
	require.False(t, !slices.Equal(c.modeList, []string{"budget"}) || c.syncInterval != 200*time.Millisecond || c.sweep != "" || c.plot != "" ||
		!c.json || !c.progressLines || c.parallel != 1 || c.cpuProfile != "cpu.out.budget-sync-interval=200ms",
		"child of %v: %+v", args, c)
}

func TestDispatchOrderStartsTheBudgetModesFirst(t *testing.T) {
	var jobs []job
	for _, m := range []string{"redis", "local", "budget", "budget-gossip"} {
		jobs = append(jobs, job{mode: m})
	}
	assert.Equal(t, []int{2, 3, 0, 1}, dispatchOrder(jobs), "dispatch order")
}

func TestFirstErrorSkipsCancellations(t *testing.T) {
	boom := errors.New("boom")
	got := firstError([]error{nil, context.Canceled, boom})
	require.EqualValues(t, boom, got, "got %v, want boom", got)
	got = firstError([]error{nil, context.Canceled})
	require.True(t, errors.Is(got, context.Canceled), "got %v, want the cancellation", got)
	got = firstError([]error{nil, nil})
	require.Nil(t, got, "got %v, want nil", got)
}

// TestProgressShowsEveryRunningMode: with two modes running, the line
// names both, each with its share; once one ends, the other's bar is back.
func TestProgressShowsEveryRunningMode(t *testing.T) {
	var w bytes.Buffer
	p := &progress{w: &w, total: 100, tty: true}
	ra, enda := p.start("budget")
	rb, endb := p.start("redis")
	ra(50)
	rb(25)
	last := lastLine(w.String())
	require.False(t, !strings.Contains(last, "budget  50%") || !strings.Contains(last, "redis  25%"), "line %q, want both modes' shares", last)
	endb()
	ra(60)
	last = lastLine(w.String())
	require.False(t, !strings.Contains(last, "[") || strings.Contains(last, "redis"), "line %q, want budget's bar alone", last)
	enda()
}

func lastLine(s string) string {
	i := strings.LastIndexByte(s, '\r')
	return s[i+1:]
}

// TestProgressLinesForAParent: -progress-lines writes one parsable line a
// percent, which followChild reads back.
func TestProgressLinesForAParent(t *testing.T) {
	var w bytes.Buffer
	child := newProgress(&w, 200, true)
	report, end := child.start("redis")
	for i := 1; i <= 200; i++ {
		report(i)
	}
	end()
	n := strings.Count(w.String(), "\n")
	require.EqualValues(t, 101, n, "%d lines, want one a percent, 0 to 100 (101)", n)
	w.WriteString("pop-sim: mode redis: it broke\n")
	parent := &progress{w: &bytes.Buffer{}, total: 1, tty: true}
	var got int
	last := followChild(&w, parent, func(done int) { got = done })
	require.False(t, got != 200 || parent.total != 200 || last != "pop-sim: mode redis: it broke", "done %d of %d, last %q", got, parent.total, last)
}

func TestTreeRSSCountsThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	stop := sampleTreeRSS(os.Getpid())
	mb := stop() // the sampler samples once before it can see the stop: no wait needed
	require.False(t, mb <= 0, "peak %g MB, want this process's", mb)
	stat := []byte("42 (a (b) c) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 1 1000 55 18446744073709551615")
	ppid, rss, ok := parseStat(stat)
	require.False(t, !ok || ppid != 7 || rss != 55, "parseStat: %d %d %v, want 7 55 true", ppid, rss, ok)
}

func TestChildEnvironSharesTheCores(t *testing.T) {
	env := childEnviron([]string{"A=1"}, 2, 2)
	require.True(t, slices.Equal(env, []string{"A=1", childEnv + "=1", "GOMAXPROCS=1"}), "2 cores, 2 at a time: %v", env)
	env = childEnviron(nil, 8, 3)
	require.EqualValues(t, "GOMAXPROCS=2", env[len(env)-1], "8 cores, 3 at a time: %v", env)
	env = childEnviron([]string{"GOMAXPROCS=4"}, 2, 2)
	require.False(t, len(env) != 2 || env[0] != "GOMAXPROCS=4", "the user's GOMAXPROCS: %v", env)
}
