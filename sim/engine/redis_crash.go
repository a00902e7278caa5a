package engine

// crashOpen applies Env.Faults' crashes to pure Redis' outcome o: a
// request its PoP's process had sent before the crash and not yet got the
// answer of when it died (its answer due after the crash) dies with it,
// as the budget modes' do (budgetSim.crash): denied (the client got no
// answer), its latency ending at the crash, nothing of it admitted
// uncounted. Its call still reached Redis and ran there (Redis counted
// what it admitted), and still waited a round trip. A request made at the
// crash's instant, or an answer due at it, is the restarted process's and
// stands (the budget modes' order of events). Pure Redis keeps no state
// at the PoP, so the crash costs nothing else.
func (e *Env) crashOpen(o *outcome) {
	for _, c := range e.Faults.Crashes {
		for i, r := range e.Trace.Requests {
			if int(r.PoP) != c.PoP || r.At >= c.At || r.At+o.latency[i] <= c.At {
				continue
			}
			o.allowed[i], o.latency[i] = false, c.At-r.At
			if o.lostAt != nil {
				o.lostAt[i] = 0
			}
		}
	}
}
