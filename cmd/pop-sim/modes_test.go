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
		{[]string{"-mode", "hybrid,sideways"}, `unknown mode "sideways"`},
		{[]string{"-mode", "hybrid,,local"}, `unknown mode ""`},
		{[]string{"-mode", "all,hybrid"}, `unknown mode "all"`},
		{[]string{"-mode", "hybrid,hybrid"}, `mode "hybrid" listed twice`},
		{[]string{"-mode", "redis", "-sweep", "margin=0,0.1"}, `-sweep needs a hybrid mode in -mode "redis"`},
		{[]string{"-mode", "redis-servertime,hybrid", "-sweep", "margin=0"}, `-sweep cannot run mode "redis-servertime"`},
		{[]string{"-mode", "hybrid,sideways", "-sweep", "margin=0"}, `unknown mode "sideways"`},
		{[]string{"-mode", "hybrid,hybrid-escrow", "-sweep", "margin=0"}, `hybrid-escrow can run at none of these values`},
	} {
		code, out, errOut := popSim(t, c.args...)
		assert.False(t, code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want), "%v: exit %d, stdout %q, stderr %q; want 2, nothing, one line with %q", c.args, code, out, errOut, c.want)
	}
}

// TestPlanSplitsRunOnceFromSwept: -mode all keeps the sweep of the hybrid
// alone, with every mode also run once; a list sweeps its hybrid modes and
// runs redis and local once.
func TestPlanSplitsRunOnceFromSwept(t *testing.T) {
	for _, c := range []struct {
		args        []string
		once, swept []string
	}{
		{[]string{"-mode", "redis,hybrid-escrow"}, []string{"redis", "hybrid-escrow"}, nil},
		{[]string{"-sweep", "margin=0"}, []string{"redis", "local", "hybrid", "hybrid-nogossip"}, []string{"hybrid"}},
		{[]string{"-mode", "hybrid-escrow", "-sweep", "margin=0.1"}, nil, []string{"hybrid-escrow"}},
		{[]string{"-mode", "local,hybrid,redis,hybrid-escrow", "-sweep", "margin=0,0.1"},
			[]string{"local", "redis"}, []string{"hybrid", "hybrid-escrow"}},
	} {
		o, err := parseFlags(c.args)
		require.NoError(t, err, "%v: %v", c.args, err)
		once, swept := o.plan()
		assert.False(t, !slices.Equal(once, c.once) || !slices.Equal(swept, c.swept), "%v: once %v, swept %v; want %v, %v", c.args, once, swept, c.once, c.swept)
	}
}

// TestSweepOfTwoModesWithReferences runs a margin sweep of the hybrid and
// escrow with pure Redis and local as references, and checks every output
// names each point's mode, and that escrow skips margin 0 with a note.
func TestSweepOfTwoModesWithReferences(t *testing.T) {
	p := redistest.Start(t)
	dir := t.TempDir()
	csvPath, pngPath := filepath.Join(dir, "f.csv"), filepath.Join(dir, "f.png")
	code, out, errOut := popSim(t, smallRun(p.Addr, "-mode", "redis,local,hybrid,hybrid-escrow",
		"-sweep", "margin=0,0.2", "-csv", csvPath, "-plot", pngPath)...)
	require.EqualValues(t, 0, code, "exit %d: %s", code, errOut)
	var r struct {
		Notes   []string                `json:"notes"`
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
	want := []string{"hybrid 0", "hybrid 0.2", "hybrid-escrow 0.2"}
	assert.True(t, slices.Equal(got, want), "sweep %v, want %v", got, want)
	assert.True(t, slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, "sweep: hybrid-escrow skips margin=0 ") }), "no note of escrow's skipped margin 0 in %q", r.Notes)
	f, err := os.Open(csvPath)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.False(t, err != nil || len(rows) != 7 || rows[0][0] != "mode", "csv %v, %v: want a header led by mode, 3 points, the reference and 2 references", rows, err)
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
	args := slices.DeleteFunc(smallRun(p.Addr, "-mode", "hybrid,hybrid-escrow", "-sweep", "margin=0.1"),
		func(a string) bool { return a == "-json" })
	code, out, errOut := popSim(t, args...)
	require.EqualValues(t, 0, code, "exit %d: %s", code, errOut)
	for _, row := range []string{"hybrid margin=0.1", "hybrid-escrow margin=0.1"} {
		assert.True(t, strings.Contains(out, row), "no row %q in:\n%s", row, out)
	}
}

// TestAllRunsBudgetOnTheHonestNetwork: -mode all runs the budget limiter
// after the hybrids on the honest network, not on the ideal one (it has no
// runner there) nor in a sweep (the swept parameters do not configure it).
func TestAllRunsBudgetOnTheHonestNetwork(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"-network", "ideal"}, false},
		{[]string{"-sweep", "margin=0,0.1"}, false},
		{[]string{"-mode", "redis,hybrid"}, false},
	} {
		o, err := parseFlags(c.args)
		require.NoError(t, err, "%v", c.args)
		once, _ := o.plan()
		assert.Equal(t, c.want, slices.Contains(once, "budget"), "%v: modes run once %v", c.args, once)
	}
}
