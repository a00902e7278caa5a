package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/edgelimit/edgelimit/sim/engine"
)

// feltHeader names the columns of what the identities felt against the
// reference, in the order feltCells fills them.
var feltHeader = []string{"served %", "under %", "beyond units", "wrongly limited", "their denied", "rate err mean %", "rate err p99 %", "contested"}

// feltCells are r's Felt columns.
func feltCells(r engine.Felt) []any {
	return []any{f(r.QuotaServedPct, 2), f(r.UnderAdmissionPct, 2), r.BeyondLimitUnits, r.WronglyLimited,
		r.WronglyLimitedUnits, f(r.RateErrorMeanPct, 2), f(r.RateErrorP99Pct, 2), r.Contested}
}

// writeFelt writes, for each row, what its decisions cost the identities
// against the reference (the ideal limiter on the same trace).
func writeFelt(w io.Writer, rows []engine.Result) error {
	fmt.Fprintln(w, "against the reference (one exact log deciding each request at its instant, no network; contested: identities whose demand passed their limit):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "mode\t")
	for _, h := range feltHeader {
		fmt.Fprintf(tw, "%s\t", h)
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t", r.Mode)
		for _, c := range feltCells(r.Felt) {
			fmt.Fprintf(tw, "%v\t", c)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
