package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// candidateLines are one candidate's lines: mixed, spread-attack, a fault
// line and the 32-PoP mixed, each figure offset by k so two candidates
// differ.
func candidateLines(k float64) []Line {
	ratio := func(v float64) *float64 { return &v }
	over, red := 1.08, 1.06 // subtracted at run time: 0.020000000000000018
	faults := []Line{}
	for _, n := range []string{"outage-20s+5s", "partition-5@35s+3s", "crash-3@45s", "redis-loss@30s", "clock-skew-2s", "gossip-loss-dup-5%"} {
		// fault lines worse than any fault-free one on every target: left out of those
		faults = append(faults, Line{Name: n, OverDelta: 0.9, P99Budget: 900, Classes: []Class{{Name: "near", Ratio: 0.5}},
			Errors: []ClassError{{Name: "calm", WronglyLimitedBudget: 90}, {Name: "bursts", ErrorBudget: 90}}})
	}
	return append(faults, []Line{
		{Name: "mixed", OverDelta: 0.01 + k, SavedPct: 71 + k, P99Budget: 190 + k, ScriptRatio: ratio(1.7 + k),
			Classes: []Class{{Name: "attackers", Ratio: 0.998}, {Name: "near", Ratio: 1.004 - k}},
			Errors: []ClassError{{Name: "calm", WronglyLimitedBudget: 0}, {Name: "bursts", ErrorRedis: 5.5, ErrorBudget: 6.4 + k},
				{Name: "attackers", ErrorRedis: 25, ErrorBudget: 40}}},
		{Name: "spread-attack", OverDelta: 0.02, SavedPct: 72 - 2*k, P99Budget: 185, ScriptRatio: ratio(1.6),
			Classes: []Class{{Name: "spread-attackers", Ratio: 0.995}},
			Errors:  []ClassError{{Name: "calm", WronglyLimitedBudget: 2}}},
		{Name: "outage-20s+5s", OverDelta: -4.3, P99Budget: 900, Classes: []Class{{Name: "attackers", Ratio: 0.7}},
			Errors: []ClassError{{Name: "calm", WronglyLimitedBudget: 50}, {Name: "near", ErrorRedis: 1, ErrorBudget: 30}}},
		{Name: "mixed-32pops", OverDelta: over - red, SavedPct: 60, P99Budget: 180, ScriptRatio: ratio(0.9 + k),
			Errors: []ClassError{{Name: "near", WronglyLimitedBudget: 7}}}, // not calm: not counted
		{Name: "mixed-1m-identities", RedisBytesRunBudget: ratio(3), RedisBytesBudget: ratio(85), ViewEntryBytes: ratio(124.5)},
		{Name: "pinned", ScriptRatio: ratio(0.1)},
		{Name: "spread-attack-32pops", ScriptRatio: ratio(0.8)},
	}...)
}

// figure finds target name's (with rule containing rule) Figure of cand.
func figure(t *testing.T, ts []Target, name, rule, cand string) Figure {
	t.Helper()
	for _, tt := range ts {
		if tt.Name == name && strings.Contains(tt.Rule, rule) {
			for _, f := range tt.Figures {
				if f.Candidate == cand {
					return f
				}
			}
		}
	}
	require.Failf(t, "no figure", "%s / %s / %s", name, rule, cand)
	return Figure{}
}

// TestTargetsJudgeEveryCandidate: each target takes the worst figure over
// the lines it reads (fault lines only by the faults' target), the least
// where more is better (round trips saved), every class but attackers for
// the decision error; a met target misses 0, a missed one by its distance
// to the bound; a target whose lines a run lacks is "not run".
func TestTargetsJudgeEveryCandidate(t *testing.T) {
	ts := judge([]string{"a", "b"}, [][]Line{candidateLines(0), candidateLines(0.5)})

	f := figure(t, ts, "worst over-admission", "fault-free", "a")
	require.NotNil(t, f.Value)
	assert.InDelta(t, 0.02, *f.Value, 1e-12, "the worst fault-free delta (spread-attack), not the outage's")
	assert.True(t, f.Met, "1.08 − 1.06 meets +0.02, though not exactly 0.02 in floating point")
	assert.Equal(t, [2]int{6, 0}, [2]int{f.Lines, f.Missed}, "no line missed")
	f = figure(t, ts, "worst over-admission", "fault-free", "b")
	assert.InDelta(t, 0.51, *f.Value, 1e-12)
	assert.Equal(t, "mixed", f.Where)
	assert.InDelta(t, 0.49, f.Miss, 1e-12, "missed by the distance to +0.02")
	assert.False(t, f.Met)
	assert.Equal(t, [2]int{6, 1}, [2]int{f.Lines, f.Missed}, "six fault-free lines read, one missed")

	f = figure(t, ts, "quota per contested class", "", "b")
	assert.InDelta(t, 0.496, *f.Value, 1e-12, "near's ratio 0.504, the outage's 0.7 left out")
	assert.Equal(t, "mixed near", f.Where)

	f = figure(t, ts, "calm identities wrongly limited", "", "a")
	assert.Equal(t, 2.0, *f.Value, "spread-attack's 2, the outage's 50 left out")
	assert.Equal(t, 2.0, f.Miss)

	f = figure(t, ts, "decision error per class", "", "a")
	assert.InDelta(t, 0.9, *f.Value, 1e-12, "bursts, attackers and the outage left out")
	assert.Equal(t, "mixed bursts", f.Where)
	assert.InDelta(t, 0.4, f.Miss, 1e-12)
	assert.Equal(t, [2]int{3, 1}, [2]int{f.Lines, f.Missed}, "lines with a class judged: mixed (missed), spread-attack, mixed-32pops")

	f = figure(t, ts, "round trips saved %", "", "b")
	assert.Equal(t, 71.0, *f.Value, "the least of mixed and spread-attack, not 32 PoPs'")
	assert.Equal(t, "spread-attack", f.Where)
	assert.Equal(t, 26.0, f.Miss, "missed by 97 − 71")

	f = figure(t, ts, "script time ÷ pure Redis'", "at 32 PoPs", "a")
	assert.InDelta(t, 0.9, *f.Value, 1e-12)
	assert.True(t, f.Met)
	f = figure(t, ts, "script time ÷ pure Redis'", "pinned", "a")
	assert.Nil(t, f.Value, "pinned without flash-crowd judges nothing")
	assert.Equal(t, "only 1 of its 2 lines run", f.Where)
	assert.False(t, f.Met)

	f = figure(t, ts, "Redis bytes per identity", "that made a request", "a")
	assert.Equal(t, 3.0, *f.Value, "per identity of the run")
	assert.True(t, f.Met)
	f = figure(t, ts, "Redis bytes per identity with state", "", "a")
	assert.Equal(t, 85.0, *f.Value, "per identity with state")
	assert.Equal(t, 21.0, f.Miss)

	f = figure(t, ts, "view bytes per identity", "", "a")
	assert.Equal(t, 124.5, *f.Value, "one PoP's bytes per entry")
	assert.Equal(t, 28.5, f.Miss)

	f = figure(t, ts, "faults: worst over-admission", "", "a")
	assert.Equal(t, 0.9, *f.Value, "the fault lines alone")
	assert.Equal(t, [2]int{7, 6}, [2]int{f.Lines, f.Missed}, "every fault prefix read: six missed, the outage at -4.3 met")
}

// TestTargetsCommand: targets NAME=DIR reads each DIR/lines.json and
// writes an aligned table, a row per target and a column per candidate,
// or with -json the Targets; a bad argument or an unreadable lines.json
// is refused with ErrReport, exit 2, one line on stderr, nothing on stdout.
func TestTargetsCommand(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	for k, d := range dirs {
		b, err := json.Marshal(candidateLines(float64(k) / 2))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(d, "lines.json"), b, 0o644))
	}
	var out, errOut bytes.Buffer
	code := run([]string{"targets", "a=" + dirs[0], "b=" + dirs[1]}, &out, &errOut)
	require.Equal(t, 0, code, "exit %d: %s", code, errOut.String())
	rows := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	require.Len(t, rows, 1+len(targets), "a head and a row per target:\n%s", out.String())
	assert.Equal(t, []string{"target", "rule", "a", "b"}, strings.Fields(rows[0]))
	assert.Contains(t, rows[1], "0.02 (mixed-32pops) met, on 6 lines")
	assert.Contains(t, rows[1], "0.51 (mixed) missed by 0.49, on 1 of 6 lines")

	out.Reset()
	code = run([]string{"targets", "-md", "a=" + dirs[0], "b=" + dirs[1]}, &out, &errOut)
	require.Equal(t, 0, code, "-md: exit %d: %s", code, errOut.String())
	md := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	require.Len(t, md, 2+len(targets), "a head, a rule and a row per target:\n%s", out.String())
	assert.Equal(t, "| target | rule | a | b |", md[0])
	assert.Equal(t, "|---|---|---|---|", md[1])
	assert.True(t, strings.HasPrefix(md[2], "| worst over-admission | "), md[2])
	assert.Contains(t, md[2], " | 0.51 (mixed) missed by 0.49, on 1 of 6 lines |")

	out.Reset()
	code = run([]string{"targets", "-md", "x|y=" + dirs[0]}, &out, &errOut)
	require.Equal(t, 0, code, "-md, a name with |: exit %d: %s", code, errOut.String())
	assert.True(t, strings.HasPrefix(out.String(), "| target | rule | x\\|y |\n|---|---|---|\n"), "a | in a cell is escaped:\n%s", out.String())
	assert.Equal(t, `| a\|b | \|c | d |`, mdRow([]string{"a|b", "|c", "d"}), "mdRow escapes every |")

	out.Reset()
	code = run([]string{"targets", "-json", "a=" + dirs[0]}, &out, &errOut)
	require.Equal(t, 0, code, "exit %d: %s", code, errOut.String())
	var ts []Target
	require.NoError(t, json.Unmarshal(out.Bytes(), &ts))
	require.Len(t, ts, len(targets))
	assert.Equal(t, "a", ts[0].Figures[0].Candidate)

	require.NoError(t, os.WriteFile(filepath.Join(dirs[1], "lines.json"), []byte("not json"), 0o644))
	for _, args := range [][]string{{"targets"}, {"targets", "nodir"}, {"targets", "=x"}, {"targets", "a=" + t.TempDir()}, {"targets", "b=" + dirs[1]}} {
		_, _, err := readCandidates(args[1:])
		if len(args) > 1 {
			assert.True(t, errors.Is(err, ErrReport), "%v: error %v, want ErrReport", args, err)
		}
		var out, errOut bytes.Buffer
		assert.Equal(t, 2, run(args, &out, &errOut), "%v: exit code", args)
		assert.Empty(t, out.String(), "%v: nothing printed", args)
		assert.Equal(t, 1, strings.Count(errOut.String(), "\n"), "%v: one line on stderr: %q", args, errOut.String())
	}
}
