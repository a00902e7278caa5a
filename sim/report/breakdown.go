package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/edgelimit/edgelimit/sim/engine"
)

// writeClasses writes each mode's row broken down by traffic class, when
// the trace has classes.
func writeClasses(w io.Writer, rs []engine.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	any := false
	for _, r := range rs {
		for _, c := range r.Classes {
			if !any {
				fmt.Fprintln(w, "by class:")
				fmt.Fprint(tw, "mode\tclass\tdecisions\tallowed\tfalse allow\tfalse deny\terror %\tover max\tover p99\twaited RT\t")
				for _, h := range feltHeader {
					fmt.Fprintf(tw, "%s\t", h)
				}
				fmt.Fprintln(tw)
				any = true
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%d\t", r.Mode, c.Class, c.Decisions, c.Allowed,
				c.FalseAllows, c.FalseDenies, f(c.DecisionErrorPct, 3), f(c.MaxOveradmission, 2),
				f(c.P99Overadmission, 2), c.Waited)
			for _, x := range feltCells(c.Felt) {
				fmt.Fprintf(tw, "%v\t", x)
			}
			fmt.Fprintln(tw)
		}
	}
	return tw.Flush()
}

// writeFaults writes what each fault cost each mode, when there were any.
func writeFaults(w io.Writer, rs []engine.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	any := false
	for _, r := range rs {
		for _, c := range r.Faults {
			if !any {
				fmt.Fprintln(w, "faults (decisions of requests made during the fault and one window after):")
				fmt.Fprintln(tw, "mode\tfault\tdecisions\tfalse allow\tfalse deny\terror %\tlost hits\t")
				any = true
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t\n", r.Mode, c.Fault, c.Decisions,
				c.FalseAllows, c.FalseDenies, f(c.DecisionErrorPct, 3), count(c.LostHits))
		}
	}
	return tw.Flush()
}

// count prints n, or "-" for a figure not measured (negative).
func count(n int64) string {
	if n < 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// writeWorst writes each result's worst identities (engine.Result.Worst):
// a title line per identity, then its seconds as an aligned table.
func writeWorst(w io.Writer, rs []engine.Result, limit int64) error {
	for _, r := range rs {
		for _, wi := range r.Worst {
			class := ""
			if wi.Class != "" {
				class = " (" + wi.Class + ")"
			}
			fmt.Fprintf(w, "%s: identity %d%s admitted %d units (%.2f× the limit) in the window ending %.3f s\n",
				r.Mode, wi.ID, class, wi.Peak, float64(wi.Peak)/float64(limit), float64(wi.PeakEndMs)/1000)
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "second\tunits\tadmitted\treference\twaited\tPoPs\t")
			for _, s := range wi.Seconds {
				fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t\n", s.Second, s.Units, s.Admitted, s.Reference, s.Waited, s.PoPs)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}
