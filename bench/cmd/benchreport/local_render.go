package main

import (
	"fmt"
	"runtime"
	"strings"
)

// renderLocal writes table 1 and its goals.
func renderLocal(d *doc, e *env, cs []*contender, figs [][2]figure, outs []*outcome) {
	d.heading(2, "1. Local hot path: one decision on a warm key, in process")
	d.para("Keys drawn in a fixed pseudo-random order from %s warm identities (every key decided once before "+
		"timing), a policy every call is admitted under (%d per %s), `testing.Benchmark` in this process: "+
		"serial (one goroutine) and `RunParallel` (GOMAXPROCS = %d goroutines). "+
		"Ratio = that row's ns/op ÷ our local backend's (above 1: we are faster). "+
		"The budget limiter (`sync/budget`) has no row: it decides in process only what a grant or its free credit "+
		"covers (the first unit of a window per identity; later units wait for a grant a Sync hands out), so a "+
		"warm-key loop like this one would mostly time round trips to Redis, which table 2 measures, not an "+
		"in-process path; its Redis memory per identity is in table 3.",
		thousands(float64(len(e.keys.keys))), hotMax, hotWindow, runtime.GOMAXPROCS(0))
	base := figs[0]
	var rows [][]string
	for i, c := range cs {
		f := figs[i]
		rows = append(rows, []string{nameCell(c), ns(f[0].ns), allocs(f[0].allocs), ratio(f[0].ns, base[0].ns),
			ns(f[1].ns), allocs(f[1].allocs), ratio(f[1].ns, base[1].ns)})
	}
	d.table([]string{"limiter", "serial ns/op", "allocs/op", "÷ ours", "parallel ns/op", "allocs/op", "÷ ours"}, rows)
	d.heading(3, "Goals")
	d.table([]string{"goal", "figure", "verdict"}, localGoals(cs, figs))
	if notes := outcomeNotes(cs, outs); notes != "" {
		d.para("%s", notes)
	}
}

// localGoals checks, for our local backends, the report's goals: ahead of every peer, 0 allocs/op, under the bare LRU floor.
func localGoals(cs []*contender, figs [][2]figure) [][]string {
	var rows [][]string
	modes := []string{"serial", "parallel"}
	for oi, o := range cs {
		if o.role != "ours" {
			continue
		}
		short := shortName(o.name)
		for m, mode := range modes {
			var behind []string
			for pi, p := range cs {
				if p.role == "peer" && figs[pi][m].ns <= figs[oi][m].ns {
					behind = append(behind, fmt.Sprintf("%s %s ns", shortName(p.name), ns(figs[pi][m].ns)))
				}
			}
			fig := fmt.Sprintf("%s ns; peers faster or equal: %s", ns(figs[oi][m].ns), orNone(behind))
			rows = append(rows, []string{short + ": ahead of every peer, " + mode, fig, verdict(len(behind) == 0)})
		}
		for m, mode := range modes {
			a := figs[oi][m].allocs
			rows = append(rows, []string{short + ": 0 allocs/op, " + mode, allocs(a), verdict(a < 0.005)})
		}
		for fi, f := range cs {
			if f.role != "floor" {
				continue
			}
			for m, mode := range modes {
				fig := fmt.Sprintf("%s ns vs %s ns (%s)", ns(figs[oi][m].ns), ns(figs[fi][m].ns), ratio(figs[oi][m].ns, figs[fi][m].ns))
				rows = append(rows, []string{short + ": under the single-lock LRU Get floor, " + mode, fig,
					verdict(figs[oi][m].ns < figs[fi][m].ns)})
			}
		}
	}
	return rows
}

func nameCell(c *contender) string {
	n := c.name
	if c.role == "ours" {
		n = "**" + n + "**"
	}
	if c.note != "" {
		n += " (" + c.note + ")"
	}
	return n
}

func shortName(s string) string {
	if i := strings.Index(s, " ("); i > 0 {
		return s[:i]
	}
	return s
}

func orNone(v []string) string {
	if len(v) == 0 {
		return "none"
	}
	return strings.Join(v, "; ")
}

// outcomeNotes reports denials and errors seen while measuring, which
// would mean a row measured something other than its admitting path.
func outcomeNotes(cs []*contender, outs []*outcome) string {
	var notes []string
	for i, c := range cs {
		o := outs[i]
		if n := o.errors.Load(); n > 0 {
			first, _ := o.first.Load().(string)
			notes = append(notes, fmt.Sprintf("%s: %d errors (first: %s)", c.name, n, first))
		}
		if n := o.denied.Load(); n > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d calls denied or missed", c.name, n))
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return "Seen while measuring: " + strings.Join(notes, "; ") + "."
}
