package main

import (
	"fmt"
	"strings"

	"github.com/edgelimit/edgelimit/sim/engine"
	"github.com/edgelimit/edgelimit/sim/report"
	"github.com/edgelimit/edgelimit/sync/budget"
)

// budgetNotes are one line per budget row of rep (a sweep point's named by
// its parameter): its Machines' items and calls per decision and its
// decisions by source, each with its share of the decisions, in the order
// the Machine tries them.
func budgetNotes(rep report.Report) []string {
	var n []string
	for _, r := range rep.Results {
		if r.Budget != nil {
			n = append(n, budgetNote(r.Mode, r))
		}
	}
	for _, p := range rep.Sweep {
		if p.Result.Budget != nil {
			n = append(n, budgetNote(p.Mode+" "+p.Param+"="+p.Value, p.Result))
		}
	}
	return n
}

// budgetNote is row r's line, named name.
func budgetNote(name string, r engine.Result) string {
	b := r.Budget
	var by []string
	for s := budget.Source(0); ; s++ {
		k, ok := b.BySource[s.String()]
		if !ok {
			break
		}
		by = append(by, fmt.Sprintf("%s %d (%.2f%%)", s, k, 100*float64(k)/float64(max(r.Decisions, 1))))
	}
	credit := "none"
	if b.FreeCredit > 0 {
		credit = fmt.Sprintf("%d unit(s) per identity, window and PoP", b.FreeCredit)
	}
	if b.PoPs != b.TracePoPs {
		credit += fmt.Sprintf(" (Machines configured for %d PoPs of %d: -budget-pops)", b.PoPs, b.TracePoPs)
	}
	return fmt.Sprintf("%s: free credit %s; items/decision %.4f, calls/decision %.4f, round trips/decision %.4f (%d Machines: %d calls, %d items, %d round trips), by source %s",
		name, credit, b.ItemsPerDecision, b.CallsPerDecision, float64(b.RoundTrips)/float64(max(r.Decisions, 1)),
		b.Machines, b.Calls, b.Items, b.RoundTrips, strings.Join(by, ", "))
}
