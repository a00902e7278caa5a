package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModeListErrorsNameTheMode: a bad -mode list, or one a sweep cannot
// run, fails in one line naming the offending mode.
func TestModeListErrorsNameTheMode(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-mode", "budget,sideways"}, `unknown mode "sideways"`},
		{[]string{"-mode", "budget,,local"}, `unknown mode ""`},
		{[]string{"-mode", "all,budget"}, `unknown mode "all"`},
		{[]string{"-mode", "budget,budget"}, `mode "budget" listed twice`},
		{[]string{"-mode", "hybrid"}, `unknown mode "hybrid"`},
		{[]string{"-mode", "redis", "-sweep", "sync-interval=10ms,1s"}, `-sweep needs a budget mode in -mode "redis"`},
		{[]string{"-mode", "redis-servertime,budget", "-sweep", "sync-interval=10ms"}, `-sweep cannot run mode "redis-servertime"`},
		{[]string{"-mode", "budget,sideways", "-sweep", "sync-interval=10ms"}, `unknown mode "sideways"`},
		{[]string{"-mode", "budget", "-network", "ideal"}, `mode budget runs on the honest network only`},
		{[]string{"-sweep", "margin=0,0.1"}, `unknown parameter "margin"`},
	} {
		code, out, errOut := popSim(t, c.args...)
		assert.False(t, code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want), "%v: exit %d, stdout %q, stderr %q; want 2, nothing, one line with %q", c.args, code, out, errOut, c.want)
	}
}

// TestPlanSplitsRunOnceFromSwept: -mode all sweeps budget alone, with
// every other mode run once; a list sweeps its budget modes and runs redis
// and local once.
func TestPlanSplitsRunOnceFromSwept(t *testing.T) {
	for _, c := range []struct {
		args        []string
		once, swept []string
	}{
		{[]string{"-mode", "redis,budget-nowait"}, []string{"redis", "budget-nowait"}, nil},
		{[]string{"-sweep", "sync-interval=10ms"}, []string{"redis", "local"}, []string{"budget"}},
		{[]string{"-mode", "budget-gossip", "-sweep", "sync-interval=10ms"}, nil, []string{"budget-gossip"}},
		{[]string{"-mode", "local,budget,redis,budget-nowait", "-sweep", "clock-skew=0,1s"},
			[]string{"local", "redis"}, []string{"budget", "budget-nowait"}},
	} {
		o, err := parseFlags(c.args)
		require.NoError(t, err, "%v: %v", c.args, err)
		once, swept := o.plan()
		assert.False(t, !slices.Equal(once, c.once) || !slices.Equal(swept, c.swept), "%v: once %v, swept %v; want %v, %v", c.args, once, swept, c.once, c.swept)
	}
}

// TestSweepOfTwoModesWithReferences runs a sync-interval sweep of budget
// and budget-nowait with pure Redis and local as references, and checks
// every output names each point's mode.
func TestSweepOfTwoModesWithReferences(t *testing.T) {
	p := redistest.Start(t)
	dir := t.TempDir()
	csvPath, pngPath := filepath.Join(dir, "f.csv"), filepath.Join(dir, "f.png")
	code, out, errOut := popSim(t, smallRun(p.Addr, "-mode", "redis,local,budget,budget-nowait",
		"-sweep", "sync-interval=50ms,200ms", "-csv", csvPath, "-plot", pngPath)...)
	require.EqualValues(t, 0, code, "exit %d: %s", code, errOut)
	var r struct {
		Results []struct{ Mode string } `json:"results"`
		Sweep   []struct {
			Mode, Value string
			Result      struct{ Mode string } `json:"result"`
		} `json:"sweep"`
	}
	err := json.Unmarshal([]byte(out), &r)
	require.NoError(t, err)
	assert.False(t, len(r.Results) != 2 || r.Results[0].Mode != "redis" || r.Results[1].Mode != "local", "results %+v, want redis and local run once", r.Results)
	var got []string
	for _, pt := range r.Sweep {
		assert.EqualValues(t, pt.Result.Mode, pt.Mode, "point %+v: mode differs from its result's", pt)
		got = append(got, pt.Mode+" "+pt.Value)
	}
	want := []string{"budget 50ms", "budget 200ms", "budget-nowait 50ms", "budget-nowait 200ms"}
	assert.True(t, slices.Equal(got, want), "sweep %v, want %v", got, want)
	f, err := os.Open(csvPath)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.False(t, err != nil || len(rows) != 8 || rows[0][0] != "mode", "csv %v, %v: want a header led by mode, 4 points, the reference and 2 references", rows, err)
	for k, w := range append(want, "reference ", "redis ", "local ") {
		row := rows[k+1]
		assert.EqualValues(t, w, row[0]+" "+row[2], "csv row %v, want %q", row, w)
	}
	_, err = os.Stat(pngPath)
	require.NoError(t, err)
}

// TestSweepTableNamesEachPointsMode: the table's sweep rows lead with the
// point's mode and value.
func TestSweepTableNamesEachPointsMode(t *testing.T) {
	p := redistest.Start(t)
	args := slices.DeleteFunc(smallRun(p.Addr, "-mode", "budget,budget-nowait", "-sweep", "sync-interval=50ms"),
		func(a string) bool { return a == "-json" })
	code, out, errOut := popSim(t, args...)
	require.EqualValues(t, 0, code, "exit %d: %s", code, errOut)
	for _, row := range []string{"budget sync-interval=50ms", "budget-nowait sync-interval=50ms"} {
		assert.True(t, strings.Contains(out, row), "no row %q in:\n%s", row, out)
	}
}

// TestAllRunsBudgetOnTheHonestNetwork: -mode all runs the budget limiter
// once after redis and local on the honest network, not on the ideal one
// (it has no runner there) nor once in a sweep (it is the swept mode).
func TestAllRunsBudgetOnTheHonestNetwork(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"-network", "ideal"}, false},
		{[]string{"-sweep", "sync-interval=10ms,1s"}, false},
		{[]string{"-mode", "redis,local"}, false},
	} {
		o, err := parseFlags(c.args)
		require.NoError(t, err, "%v", c.args)
		once, _ := o.plan()
		assert.Equal(t, c.want, slices.Contains(once, "budget"), "%v: modes run once %v", c.args, once)
	}
}

// TestGossipModesNeedNATS: a mode that gossips (budget-gossip,
// budget-nowait-gossip) or any sweep starts NATS; the others do not.
func TestGossipModesNeedNATS(t *testing.T) {
	for mode, want := range map[string]bool{"redis,budget": false, "budget-nowait": false, "redis,budget-gossip": true, "budget-nowait-gossip": true} {
		o, err := parseFlags([]string{"-mode", mode})
		require.NoError(t, err, mode)
		assert.Equal(t, want, o.needsNATS(), "-mode %s", mode)
	}
}
