package main

import (
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/sim/traffic"
)

// renderAccuracy writes table 4.
func renderAccuracy(d *doc, tr *traffic.Trace, rows []accuracyRow) {
	c := tr.Config
	d.heading(2, "4. Accuracy under a spread attack: gubernator GLOBAL next to our budget limiter")
	d.para("The simulator's `%s` traffic (package `sim/traffic`, seed %d): %d PoPs, %s identities, %s requests "+
		"over %s, limit %d per %s; attackers spread over every PoP at several times their limit, and a calm "+
		"majority. The trace is replayed in real time, in order, from one goroutine (each request at its PoP's "+
		"limiter), and every decision is judged by the simulator's ground truth (`sim/truth`: the exact log of "+
		"everything admitted, over all PoPs) at the time it was sent. Gubernator runs as its own in-process "+
		"cluster (package `cluster`), one daemon per PoP; our budget limiter runs one `sync/budget` Limiter per PoP on the "+
		"same private Redis, gossiping over an embedded NATS. Ratio = that row's decision error ÷ our budget limiter's.",
		c.Scenario, c.Seed, c.PoPs, thousands(float64(c.Identities)), thousands(float64(len(tr.Requests))),
		tr.Duration, c.Limit, c.Window)
	ref := -1.0
	if len(rows) > 0 && rows[0].err == nil {
		ref = rows[0].res.ErrorPct()
	}
	var out [][]string
	for _, r := range rows {
		name := r.name + " (" + r.note + ")"
		if r.err != nil {
			out = append(out, []string{name, "failed: " + r.err.Error(), "", "", "", "", "", "", ""})
			continue
		}
		s := r.res
		out = append(out, []string{name, thousands(float64(s.Decisions)), thousands(float64(s.FalseAllows)),
			thousands(float64(s.FalseDenies)), fmt.Sprintf("%.3f%%", s.ErrorPct()), ratio(s.ErrorPct(), ref),
			fmt.Sprintf("%.2f", s.MaxOveradmission), fmt.Sprintf("%.2f", s.P99Overadmission),
			replayNote(r.res)})
	}
	d.table([]string{"limiter", "decisions", "false allows", "false denies", "decision error", "÷ ours",
		"over-admission, worst", "over-admission, p99", "replay"}, out)
	if len(rows) > 1 && rows[0].err == nil && rows[1].err == nil {
		ours, gub := rows[0].res, rows[1].res
		d.heading(3, "Goals")
		d.table([]string{"goal", "figure", "target", "verdict"}, [][]string{
			{"budget decision error ÷ gubernator GLOBAL's", ratio(ours.ErrorPct(), gub.ErrorPct()), "< 1", verdict(ours.ErrorPct() < gub.ErrorPct())},
			{"budget worst over-admission ÷ gubernator GLOBAL's", ratio(ours.MaxOveradmission, gub.MaxOveradmission), "< 1",
				verdict(ours.MaxOveradmission < gub.MaxOveradmission)},
		})
	}
	d.para("The pure-Redis row is the sliding window counter's own approximation error against the exact log " +
		"on this traffic: the part of the budget limiter's error that its local-first design did not add. ")
	d.para("Gubernator offers token and leaky buckets only, so part of its error against the sliding-window " +
		"ground truth is its algorithm, not its GLOBAL mode: the \"owner decides\" row isolates that part. " +
		"Over-admission is the most units one identity got in any window-long interval ÷ the limit (1.00 = exact). " +
		"A row that fell behind the trace by more than a window met slower traffic than the others (each of its " +
		"decisions is still judged at the time it was really made), so its figures are not like for like.")
}

// replayNote says how faithfully the trace was replayed.
func replayNote(s scored) string {
	n := fmt.Sprintf("%d errors; fell behind by ≤ %s", s.errors, s.maxLag.Round(time.Millisecond))
	if s.first != "" {
		n += fmt.Sprintf(" (first: %.120s; errored decisions are not judged)", s.first)
	}
	if s.cut {
		n += "; **stopped at its deadline before the trace ended**"
	}
	return n
}
