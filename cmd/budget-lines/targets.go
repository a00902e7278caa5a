package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
)

// faultLines name, by prefix, the lines that inject a fault (a Redis
// outage, a partition, a crash, Redis losing its state, clock skew,
// gossip loss): judged by their own target, not by the fault-free ones.
var faultLines = []string{"outage", "partition", "crash", "redis-loss", "clock-skew", "gossip-loss"}

func isFault(name string) bool {
	for _, p := range faultLines {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Figure is one candidate's figure on one target: the worst Value over
// the lines the target reads, Where it was (line, and class where the
// target is per class), whether it Met the target, by how much it missed
// (0 when met), and on how many of the Lines read it missed. A target
// whose lines the candidate's run lacks, all or some, has Value nil (JSON
// null) and Where "not run" or how many it has.
type Figure struct {
	Candidate string   `json:"candidate"`
	Value     *float64 `json:"value"`
	Where     string   `json:"where"`
	Met       bool     `json:"met"`
	Miss      float64  `json:"miss"`
	Lines     int      `json:"lines"`
	Missed    int      `json:"lines_missed"`
}

// Target is one line of the targets: its name, its rule as text, and each
// candidate's Figure.
type Target struct {
	Name    string   `json:"target"`
	Rule    string   `json:"rule"`
	Figures []Figure `json:"figures"`
}

// target is how one target reads a candidate's lines: lines names the
// lines it reads (a run that lacks some of them judges nothing rather
// than the rest), or, when nil, keep picks them; vals gives a line's
// values (by class, "" for the line's own figure; none when the line did
// not measure it); bound and higher say the rule (value ≤ bound, or ≥
// bound when higher).
type target struct {
	name, rule string
	bound      float64
	higher     bool
	keep       func(Line) bool
	lines      []string
	vals       func(Line) map[string]float64
}

// reads reports whether t reads line l.
func (t target) reads(l Line) bool {
	if t.lines != nil {
		return slices.Contains(t.lines, l.Name)
	}
	return t.keep(l)
}

// tolerance is how far past its bound a value may lie and still meet it:
// the figures are ratios and differences of decimals, not exact in
// floating point.
const tolerance = 1e-9

// figure is t's Figure of ls: the worst value over the lines t reads (the
// largest, or the least when higher), where, and the lines missed.
func (t target) figure(cand string, ls []Line) Figure {
	f := Figure{Candidate: cand, Where: "not run"}
	worse := func(a, b float64) bool { return (t.higher && a < b) || (!t.higher && a > b) }
	for _, l := range ls {
		if !t.reads(l) {
			continue
		}
		vs := t.vals(l)
		keys := make([]string, 0, len(vs))
		for k := range vs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		missed := false
		for _, k := range keys {
			v := vs[k]
			if f.Value == nil || worse(v, *f.Value) {
				f.Value, f.Where = &v, strings.TrimSpace(l.Name+" "+k)
			}
			missed = missed || (worse(v, t.bound) && math.Abs(v-t.bound) >= tolerance)
		}
		if len(keys) > 0 {
			f.Lines++
			if missed {
				f.Missed++
			}
		}
	}
	if want := len(t.lines); f.Value != nil && f.Lines < want {
		f.Where = fmt.Sprintf("only %d of its %d lines run", f.Lines, want)
		f.Value = nil // a partial run judges nothing
	}
	if f.Value != nil {
		f.Miss = *f.Value - t.bound
		if t.higher {
			f.Miss = -f.Miss
		}
		if f.Miss < tolerance {
			f.Miss = 0 // 1.08 − 1.06 is 0.020000000000000018 in floating point
		}
		f.Met = f.Miss == 0
	}
	return f
}

func notFault(l Line) bool { return !isFault(l.Name) }

func one(v float64) map[string]float64 { return map[string]float64{"": v} }

// targets are the limiter's targets against pure Redis, each read from
// the lines scripts/budget-lines.sh runs (docs/budget.md, "The targets,
// line by line").
var targets = []target{
	{name: "worst over-admission", rule: "budget − pure Redis ≤ +0.02 on every fault-free line", bound: 0.02, keep: notFault,
		vals: func(l Line) map[string]float64 { return one(l.OverDelta) }},
	{name: "quota per contested class", rule: "units ÷ pure Redis' within 1 ± 0.01 on every fault-free line (the value: the distance from 1)", bound: 0.01, keep: notFault,
		vals: func(l Line) map[string]float64 {
			m := map[string]float64{}
			for _, c := range l.Classes {
				m[c.Name] = math.Abs(c.Ratio - 1)
			}
			return m
		}},
	{name: "calm identities wrongly limited", rule: "0 on every fault-free line (the most on one line)", keep: notFault,
		vals: func(l Line) map[string]float64 {
			m := map[string]float64{}
			for _, c := range l.Errors {
				if c.Name == "calm" {
					m[c.Name] = float64(c.WronglyLimitedBudget)
				}
			}
			return m
		}},
	{name: "decision error per class", rule: "budget − pure Redis ≤ +0.5 point, every class but attackers, fault-free lines", bound: 0.5, keep: notFault,
		vals: func(l Line) map[string]float64 {
			m := map[string]float64{}
			for _, c := range l.Errors {
				if !strings.Contains(c.Name, "attacker") {
					m[c.Name] = c.ErrorBudget - c.ErrorRedis
				}
			}
			return m
		}},
	{name: "round trips saved %", rule: "≥ 97 on mixed and spread-attack", bound: 97, higher: true,
		lines: []string{"mixed", "spread-attack"}, vals: func(l Line) map[string]float64 { return one(l.SavedPct) }},
	{name: "p99 added latency ms", rule: "0 on every fault-free line", keep: notFault,
		vals: func(l Line) map[string]float64 { return one(l.P99Budget) }},
	{name: "script time ÷ pure Redis'", rule: "≤ 0.5 on mixed and spread-attack", bound: 0.5,
		lines: []string{"mixed", "spread-attack"}, vals: value(func(l Line) *float64 { return l.ScriptRatio })},
	{name: "script time ÷ pure Redis'", rule: "≤ 0.2 on pinned and flash-crowd", bound: 0.2,
		lines: []string{"pinned", "flash-crowd"}, vals: value(func(l Line) *float64 { return l.ScriptRatio })},
	{name: "script time ÷ pure Redis'", rule: "≤ 1 at 32 PoPs", bound: 1,
		lines: []string{"mixed-32pops", "spread-attack-32pops"}, vals: value(func(l Line) *float64 { return l.ScriptRatio })},
	{name: "Redis bytes per identity", rule: "≤ 64 at 1,000,000 identities (used_memory grown ÷ identities that made a request)", bound: 64,
		lines: []string{"mixed-1m-identities"}, vals: value(func(l Line) *float64 { return l.RedisBytesRunBudget })},
	{name: "Redis bytes per identity with state", rule: "≤ 64 at 1,000,000 identities (÷ identities with state at the run's end)", bound: 64,
		lines: []string{"mixed-1m-identities"}, vals: value(func(l Line) *float64 { return l.RedisBytesBudget })},
	{name: "view bytes per identity", rule: "≤ 96 at 1,000,000 identities (a PoP's heap ÷ the entries of its view)", bound: 96,
		lines: []string{"mixed-1m-identities"}, vals: value(func(l Line) *float64 { return l.ViewEntryBytes })},
	{name: "faults: worst over-admission", rule: "budget − pure Redis ≤ +0.02 on every fault line", bound: 0.02,
		keep: func(l Line) bool { return isFault(l.Name) }, vals: func(l Line) map[string]float64 { return one(l.OverDelta) }},
}

// value reads a line's one figure through get: none when the line did
// not measure it (nil).
func value(get func(Line) *float64) func(Line) map[string]float64 {
	return func(l Line) map[string]float64 {
		if v := get(l); v != nil {
			return one(*v)
		}
		return nil
	}
}

// judge computes every target's Figure for each candidate's lines.
func judge(names []string, runs [][]Line) []Target {
	var out []Target
	for _, t := range targets {
		tt := Target{Name: t.name, Rule: t.rule}
		for k, ls := range runs {
			tt.Figures = append(tt.Figures, t.figure(names[k], ls))
		}
		out = append(out, tt)
	}
	return out
}

// targetsCmd reads NAME=DIR arguments, each DIR/lines.json of one
// candidate's scripts/budget-lines.sh run, and writes every target with
// each candidate's worst figure and its miss (with -md as a Markdown
// table; with -json, the Targets).
func targetsCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("targets", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the targets as one JSON array instead of the table")
	md := fs.Bool("md", false, "print the table in Markdown")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 1 {
		return fmt.Errorf("%w: want at least one NAME=DIR; %s", ErrReport, usage)
	}
	names, runs, err := readCandidates(fs.Args())
	if err != nil {
		return err
	}
	ts := judge(names, runs)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(ts)
	}
	if *md {
		fmt.Fprintln(stdout, mdRow(append([]string{"target", "rule"}, names...)))
		fmt.Fprintf(stdout, "|---|---|%s\n", strings.Repeat("---|", len(names)))
		for _, t := range ts {
			cells := []string{t.Name, t.Rule}
			for _, f := range t.Figures {
				cells = append(cells, cell(f))
			}
			fmt.Fprintln(stdout, mdRow(cells))
		}
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "target\trule")
	for _, n := range names {
		fmt.Fprintf(tw, "\t%s", n)
	}
	fmt.Fprintln(tw)
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%s", t.Name, t.Rule)
		for _, f := range t.Figures {
			fmt.Fprintf(tw, "\t%s", cell(f))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// mdRow is one Markdown table row of cells, each "|" in them escaped.
func mdRow(cells []string) string {
	esc := make([]string, len(cells))
	for i, c := range cells {
		esc[i] = strings.ReplaceAll(c, "|", `\|`)
	}
	return "| " + strings.Join(esc, " | ") + " |"
}

// readCandidates reads NAME=DIR arguments: each candidate's name and the
// Lines of its DIR/lines.json.
func readCandidates(args []string) ([]string, [][]Line, error) {
	var names []string
	var runs [][]Line
	for _, a := range args {
		name, dir, ok := strings.Cut(a, "=")
		if !ok || name == "" || dir == "" {
			return nil, nil, fmt.Errorf("%w: %q is not NAME=DIR", ErrReport, a)
		}
		b, err := os.ReadFile(filepath.Join(dir, "lines.json"))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: candidate %s: %w", ErrReport, name, err)
		}
		var ls []Line
		if err := json.Unmarshal(b, &ls); err != nil {
			return nil, nil, fmt.Errorf("%w: candidate %s: %s/lines.json: %w", ErrReport, name, dir, err)
		}
		names, runs = append(names, name), append(runs, ls)
	}
	return names, runs, nil
}

// cell shows a Figure: its value, where, and "met" or "missed by" its miss.
func cell(f Figure) string {
	if f.Value == nil {
		return f.Where
	}
	verdict := fmt.Sprintf("met, on %d lines", f.Lines)
	if !f.Met {
		verdict = fmt.Sprintf("missed by %s, on %d of %d lines", num(f.Miss), f.Missed, f.Lines)
	}
	return fmt.Sprintf("%s (%s) %s", num(*f.Value), f.Where, verdict)
}

// num shows v with two decimals, or none when it is whole.
func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
