package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/edgelimit/edgelimit/sim/engine"
)

// header names the table's columns, in the order row fills them.
var header = []string{"mode", "decisions", "allowed", "denied", "false allow", "false deny",
	"error %", "over max", "over p99", "redis RTs", "RT/dec", "saved %", "nats msgs",
	"nats bytes", "lat p50 ms", "lat p99 ms", "lost", "wall s", "peak MB"}

func row(r engine.Result) []any {
	return []any{r.Mode, r.Decisions, r.Allowed, r.Denied, r.FalseAllows, r.FalseDenies,
		f(r.DecisionErrorPct, 3), f(r.MaxOveradmission, 2), f(r.P99Overadmission, 2),
		r.RedisRoundTrips, f(r.RoundTripsPerDecision, 4), saved(r),
		r.NATSMessages, r.NATSBytes, f(r.AddedLatencyP50Ms, 1), f(r.AddedLatencyP99Ms, 1),
		count(r.LostHits), f(r.WallSeconds, 1), mb(r.PeakRSSMB)}
}

func f(v float64, prec int) string { return fmt.Sprintf("%.*f", prec, v) }

// saved shows a row's round trips saved, "-" where they do not apply
// (the reference: engine.Result.SavesRoundTrips).
func saved(r engine.Result) string {
	if !r.SavesRoundTrips() {
		return "-"
	}
	return f(r.RoundTripsSavedPct, 2)
}

// mb shows a peak memory in MiB, "-" when unknown.
func mb(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", v)
}

// WriteTable writes rep as a title line (naming the clock skew only when
// there is one) and an aligned table, one row per
// result, then the sweep's rows when there are any.
func WriteTable(w io.Writer, rep Report) error {
	fmt.Fprintf(w, "scenario %s, seed %d: %d PoPs, %d identities, %d requests, limit %d per %dms, sync every %dms",
		rep.Scenario, rep.Seed, rep.PoPs, rep.Identities, rep.Requests, rep.Limit, rep.WindowMs,
		rep.SyncIntervalMs)
	if rep.ClockSkewMs != 0 {
		fmt.Fprintf(w, ", clock skew ±%dms", rep.ClockSkewMs)
	}
	if rep.Network != "" {
		fmt.Fprintf(w, ", %s network", rep.Network)
		if rep.Network == "honest" {
			fmt.Fprintf(w, " (jitter %g)", rep.Jitter)
		}
	}
	fmt.Fprintln(w)
	var rows []engine.Result
	if rep.Reference != nil {
		rows = append(rows, *rep.Reference)
	}
	rows = append(rows, rep.Results...)
	for _, p := range rep.Sweep {
		r := p.Result
		r.Mode = p.Mode + " " + p.Param + "=" + p.Value
		rows = append(rows, r)
	}
	if err := writeAligned(w, header, rows); err != nil {
		return err
	}
	if err := writeFelt(w, rows); err != nil {
		return err
	}
	if err := writeClasses(w, rep.Results); err != nil {
		return err
	}
	if err := writeFaults(w, rep.Results); err != nil {
		return err
	}
	if err := writeLoad(w, rep.Results); err != nil {
		return err
	}
	if err := writeMemory(w, rep.Results); err != nil {
		return err
	}
	if err := writeWorst(w, rep.Results, rep.Limit); err != nil {
		return err
	}
	writeRun(w, rep.Run)
	for _, n := range rep.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
	return nil
}

func writeAligned(w io.Writer, head []string, rows []engine.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	line := func(cells []any) {
		for _, c := range cells {
			fmt.Fprintf(tw, "%v\t", c)
		}
		fmt.Fprintln(tw)
	}
	cells := make([]any, len(head))
	for i, h := range head {
		cells[i] = h
	}
	line(cells)
	for _, r := range rows {
		line(row(r))
	}
	return tw.Flush()
}

// writeRun writes the run's own line when its modes ran several at a time
// (one at a time, each row's wall s and peak MB are the mode's own).
func writeRun(w io.Writer, run *Run) {
	if run == nil || run.Parallel <= 1 {
		return
	}
	fmt.Fprintf(w, "run: %d modes at a time, each in a pop-sim process of its own with its own redis-server: %.1f s wall, peak %s MB summed over the processes (a row's wall s is that mode's own time while it shared the cores; its peak MB its own process's)\n",
		run.Parallel, run.WallSeconds, mb(run.PeakRSSMB))
}
