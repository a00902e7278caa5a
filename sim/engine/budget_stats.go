package engine

import "github.com/edgelimit/edgelimit/sync/budget"

// BudgetStats is the budget mode's work, sync/budget's Machine.Stats
// summed over every PoP's Machines (crashed incarnations included). The
// zero value is no work; nil in a Result for every other mode.
type BudgetStats struct {
	// BySource counts the Machines' decisions by budget.Source name
	// (deny-cache, full, grant, free, fallback, redis). A crashed
	// incarnation's request still waiting on Redis is counted nowhere.
	BySource map[string]uint64 `json:"decisions_by_source"`
	// Calls, Items and RoundTrips are budget.Stats' fields: script calls
	// sent (decision Calls and Sync batches, retries included; the
	// simulator sends every Call its Machines plan), the items in them,
	// and the round trips they take on one Redis node.
	Calls      uint64 `json:"calls"`
	Items      uint64 `json:"items"`
	RoundTrips uint64 `json:"round_trips"`
	// PaidLate counts the requests Redis denied that budget the PoP held
	// when the reply came paid (budget.Stats.PaidLate): counted in
	// BySource under grant or free, they waited a round trip.
	PaidLate uint64 `json:"paid_late"`
	// GossipDenies counts the deny-untils heard gossip set or extended
	// (budget-gossip only).
	GossipDenies uint64 `json:"gossip_denies,omitempty"`
	// Machines is how many Machines the sums are over: one per PoP plus
	// one per crash.
	Machines int `json:"machines"`
	// FreeCredit is the Machines' free credit, units per identity, window
	// and PoP (budget.Config.FreeCredit with its default resolved; 0:
	// none).
	FreeCredit int64 `json:"free_credit"`
	// PoPs is the Machines' budget.Config.PoPs (Env.BudgetPoPs, or the
	// trace's PoPs); TracePoPs the PoPs the trace has.
	PoPs      int `json:"pops"`
	TracePoPs int `json:"trace_pops"`
	// Buckets is the Machines' budget.Config.Buckets (Env.BudgetBuckets,
	// or the size of the trace's: Env.budgetBuckets).
	Buckets int `json:"buckets"`
	// ItemsPerDecision and CallsPerDecision divide Items and Calls by the
	// trace's decisions (every request, as round trips per decision do).
	ItemsPerDecision float64 `json:"items_per_decision"`
	CallsPerDecision float64 `json:"calls_per_decision"`
}

// budgetStats sums ms' Stats; decisions is the trace's request count, pops
// its PoPs.
func budgetStats(ms []*budget.Machine, decisions, pops int) *BudgetStats {
	b := &BudgetStats{BySource: map[string]uint64{}, Machines: len(ms), TracePoPs: pops}
	for _, m := range ms {
		b.FreeCredit, b.PoPs, b.Buckets = m.Config().FreeCredit, m.Config().PoPs, m.Config().Buckets
		st := m.Stats()
		for src, n := range st.Decisions {
			b.BySource[budget.Source(src).String()] += n
		}
		b.Calls += st.Calls
		b.Items += st.Items
		b.RoundTrips += st.RoundTrips
		b.GossipDenies += st.GossipDenies
		b.PaidLate += st.PaidLate
	}
	if decisions > 0 {
		b.ItemsPerDecision = float64(b.Items) / float64(decisions)
		b.CallsPerDecision = float64(b.Calls) / float64(decisions)
	}
	return b
}
