package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/edgelimit/edgelimit/sim/engine"
	"github.com/edgelimit/edgelimit/sim/report"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rows are a line's pure Redis and budget rows, every figure distinct so
// a cell taken from the wrong field shows.
func rows(k float64) (engine.Result, engine.Result) {
	rd := engine.Result{Mode: "redis", Decisions: 200000, MaxOveradmission: 1.15 + k, AddedLatencyP99Ms: 215.6 + k,
		LostHits: 3, RedisLoad: &engine.RedisLoad{ScriptSeconds: 1.2 + k},
		Memory: &engine.Memory{Redis: &engine.RedisMemory{BytesPerIdentity: 181.9 + k}},
		Classes: []engine.ClassResult{
			{Class: "calm", Allowed: 80000},
			{Class: "attackers", Allowed: 13193, Felt: engine.Felt{Contested: 22, QuotaServedPct: 99.95}},
			{Class: "near", Allowed: 36590, Felt: engine.Felt{Contested: 53, QuotaServedPct: 100.73}}}}
	rd.WronglyLimited = 1
	bu := engine.Result{Mode: "budget", Decisions: 200000, MaxOveradmission: 1.08 + k, AddedLatencyP99Ms: 73 + k,
		RoundTripsSavedPct: 96.28 + k, LostHits: -1, RedisLoad: &engine.RedisLoad{ScriptSeconds: 5.6 + k},
		Budget: &engine.BudgetStats{ItemsPerDecision: 0.3 + k},
		Memory: &engine.Memory{Redis: &engine.RedisMemory{BytesPerIdentity: 61.5 + k, UsedBytes: 123000},
			View: &engine.ViewMemory{BytesPerIdentity: 280.25 + k, BytesPerEntry: 71.5 + k, Identities: 1000}},
		Classes: []engine.ClassResult{
			{Class: "calm", Allowed: 79999},
			{Class: "attackers", Allowed: 12969, Felt: engine.Felt{Contested: 22, QuotaServedPct: 98.25}},
			{Class: "near", Allowed: 34681, Felt: engine.Felt{Contested: 53, QuotaServedPct: 95.47}}}}
	bu.WronglyLimited = 13
	return rd, bu
}

// writeReport writes a pop-sim -json report of results to dir/name.json.
func writeReport(t *testing.T, dir, name string, results ...engine.Result) {
	t.Helper()
	b, err := json.Marshal(report.Report{Scenario: name, Results: results})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".json"), b, 0o644))
}

// TestTableOfLines: two lines' reports give one aligned table, a row per
// contested class (calm, contested nowhere, is left out) with the line's
// figures on its first row, each cell from its field: over-admission and
// its delta, served % and units ratio, script time per decision from
// INFO's seconds, bytes, "-" for what budget does not measure (lost);
// -json gives the same figures.
func TestTableOfLines(t *testing.T) {
	dir := t.TempDir()
	rd, bu := rows(0)
	writeReport(t, dir, "mixed", rd, bu)
	rd2, bu2 := rows(0.5)
	bu2.Memory, bu2.RedisLoad = nil, nil // a run that measured neither
	writeReport(t, dir, "pinned", bu2, rd2)
	var out, errOut bytes.Buffer
	code := run([]string{"table", dir, "mixed", "pinned"}, &out, &errOut)
	require.Equal(t, 0, code, "exit %d: %s", code, errOut.String())
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	require.Len(t, lines, 5, "head, two contested classes per line:\n%s", out.String())
	for _, l := range lines[1:] {
		assert.Equal(t, utf8.RuneCountInString(lines[0]), utf8.RuneCountInString(l), "rows aligned to the head:\n%s", out.String())
	}
	usR, usB := 1.2e6/200000, 5.6e6/200000
	assert.Equal(t, []string{"mixed", "1.15/1.08", "-0.07", "attackers", "99.95/98.25", fmt.Sprintf("%.3f", 12969.0/13193),
		"1/13", "96.28", "215.6/73.0", fmt.Sprintf("%.2f/%.2f", usR, usB), fmt.Sprintf("%.2f", usB/usR), "0.300",
		"181.9/61.5", "71.5", "280.2", "3/-"}, strings.Fields(lines[1]), "mixed's first row")
	assert.Equal(t, []string{"near", "100.73/95.47", fmt.Sprintf("%.3f", 34681.0/36590)}, strings.Fields(lines[2]), "mixed's second row: its class alone")
	assert.Equal(t, []string{"pinned", "1.65/1.58", "-0.07", "attackers", "99.95/98.25", fmt.Sprintf("%.3f", 12969.0/13193),
		"1/13", "96.78", "216.1/73.5", fmt.Sprintf("%.2f/-", 1.7e6/200000), "-", "0.800", "182.4/-", "-", "-", "3/-"},
		strings.Fields(lines[3]), "pinned's first row, budget's unmeasured figures as -")

	out.Reset()
	code = run([]string{"table", "-json", dir, "mixed"}, &out, &errOut)
	require.Equal(t, 0, code, "-json: exit %d: %s", code, errOut.String())
	var ls []Line
	require.NoError(t, json.Unmarshal(out.Bytes(), &ls), "-json output:\n%s", out.String())
	require.Len(t, ls, 1)
	l := ls[0]
	assert.InDelta(t, -0.07, l.OverDelta, 1e-9, "over-admission delta")
	require.False(t, l.ScriptRatio == nil || l.ViewBytes == nil || l.RedisBytesBudget == nil, "measured figures missing: %+v", l)
	assert.InDelta(t, usB/usR, *l.ScriptRatio, 1e-12, "script time ratio")
	assert.Equal(t, 280.25, *l.ViewBytes, "view bytes per identity")
	require.NotNil(t, l.ViewEntryBytes, "view bytes per entry missing")
	assert.Equal(t, 71.5, *l.ViewEntryBytes, "view bytes per entry")
	assert.Nil(t, l.LostBudget, "budget's lost units, not measured")
	require.NotNil(t, l.RedisBytesRunBudget, "Redis bytes per identity of the run missing")
	assert.Equal(t, 123.0, *l.RedisBytesRunBudget, "used_memory grown ÷ the run's identities")
	assert.Equal(t, []Class{{"attackers", 13193, 12969, 99.95, 98.25, 12969.0 / 13193}, {"near", 36590, 34681, 100.73, 95.47, 34681.0 / 36590}}, l.Classes, "contested classes")
}

// TestGossipLineReadsBudgetGossip: a line run with -mode
// redis,budget-gossip takes its budget figures from the budget-gossip row;
// with both a budget and a budget-gossip row, from the first.
func TestGossipLineReadsBudgetGossip(t *testing.T) {
	dir := t.TempDir()
	rd, bu := rows(0)
	bu.Mode = "budget-gossip"
	writeReport(t, dir, "gossip", rd, bu)
	l, err := readLine(dir, "gossip")
	require.NoError(t, err)
	assert.Equal(t, bu.MaxOveradmission, l.OverBudget, "budget-gossip's row in budget's column")
	_, other := rows(0.5)
	writeReport(t, dir, "both", rd, other, bu)
	l, err = readLine(dir, "both")
	require.NoError(t, err)
	assert.Equal(t, other.MaxOveradmission, l.OverBudget, "the first budget row")
}

// TestTableRefusesBadReports: a missing report, one that is not JSON, and
// one without a budget row are refused with ErrReport, exit 2, one line on
// stderr and nothing on stdout.
func TestTableRefusesBadReports(t *testing.T) {
	dir := t.TempDir()
	rd, _ := rows(0)
	writeReport(t, dir, "redis-only", rd)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "garbage.json"), []byte("scenario mixed"), 0o644))
	for _, name := range []string{"missing", "garbage", "redis-only"} {
		_, err := readLine(dir, name)
		assert.True(t, errors.Is(err, ErrReport), "%s: error %v, want ErrReport", name, err)
		var out, errOut bytes.Buffer
		code := run([]string{"table", dir, name}, &out, &errOut)
		assert.Equal(t, 2, code, "%s: exit code", name)
		assert.Empty(t, out.String(), "%s: nothing printed", name)
		assert.Equal(t, 1, strings.Count(errOut.String(), "\n"), "%s: one line on stderr: %q", name, errOut.String())
	}
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run([]string{"table", dir}, &out, &errOut), "a table without lines")
	assert.Equal(t, 2, run([]string{"nope"}, &out, &errOut), "an unknown subcommand")
	assert.Equal(t, 2, run(nil, &out, &errOut), "no subcommand")
}

// TestLineReadsAnyBudgetMode: a line run with -mode redis,budget-nowait
// takes its candidate's figures from the budget-nowait row and names it;
// every class's decision error and wrongly limited identities, contested
// or not, come from each mode's own row.
func TestLineReadsAnyBudgetMode(t *testing.T) {
	dir := t.TempDir()
	rd, bu := rows(0)
	bu.Mode = "budget-nowait"
	rd.Classes[0].DecisionErrorPct, bu.Classes[0].DecisionErrorPct = 0.25, 0.75
	rd.Classes[0].WronglyLimited, bu.Classes[0].WronglyLimited = 1, 7
	rd.Classes[2].DecisionErrorPct, bu.Classes[2].DecisionErrorPct = 12.8, 12.1
	writeReport(t, dir, "nowait", rd, bu)
	l, err := readLine(dir, "nowait")
	require.NoError(t, err)
	assert.Equal(t, "budget-nowait", l.Mode)
	assert.Equal(t, bu.MaxOveradmission, l.OverBudget, "budget-nowait's row in budget's column")
	assert.Equal(t, []ClassError{
		{Name: "calm", ErrorRedis: 0.25, ErrorBudget: 0.75, WronglyLimitedRedis: 1, WronglyLimitedBudget: 7},
		{Name: "attackers"},
		{Name: "near", ErrorRedis: 12.8, ErrorBudget: 12.1}}, l.Errors)
}
