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
// the Machine tries them, and how many of those Redis had denied and the
// PoP's budget paid at the reply (they waited a round trip).
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
	note := fmt.Sprintf("%s: free credit %s; items/decision %.4f, calls/decision %.4f, round trips/decision %.4f (%d Machines: %d calls, %d items, %d round trips), by source %s",
		name, credit, b.ItemsPerDecision, b.CallsPerDecision, float64(b.RoundTrips)/float64(max(r.Decisions, 1)),
		b.Machines, b.Calls, b.Items, b.RoundTrips, strings.Join(by, ", "))
	note += fmt.Sprintf("; paid late %d (denied at Redis, paid by a grant or free credit the reply found: counted under grant or free, they waited a round trip)", b.PaidLate)
	if fd := bySourceNote(r, func(c engine.ClassResult) map[string]int64 { return c.FalseDeniesBySource }); fd != "" {
		note += "; false denies by source: " + fd
	}
	if fa := bySourceNote(r, func(c engine.ClassResult) map[string]int64 { return c.FalseAllowsBySource }); fa != "" {
		note += "; false allows by source: " + fa
	}
	return note
}

// bySourceNote lists, per class with any, how many false verdicts of one
// kind (split picks false denies or false allows) each source made
// ("attackers: full 16452, redis 4116"), sources in the order the Machine
// tries them, a crash's unanswered requests last.
func bySourceNote(r engine.Result, split func(engine.ClassResult) map[string]int64) string {
	var per []string
	for _, c := range r.Classes {
		m := split(c)
		if len(m) == 0 {
			continue
		}
		var by []string
		for s := budget.Source(0); ; s++ {
			name := s.String()
			if strings.HasPrefix(name, "Source(") {
				break
			}
			if k := m[name]; k > 0 {
				by = append(by, fmt.Sprintf("%s %d", name, k))
			}
		}
		if k := m["crash"]; k > 0 {
			by = append(by, fmt.Sprintf("crash %d", k))
		}
		per = append(per, c.Class+": "+strings.Join(by, ", "))
	}
	return strings.Join(per, "; ")
}
