package budget

// How a request spends what this PoP holds: its grant balance and free
// credit when they cover it (payHere, and payHereLate for a request Redis
// denied), or, for a request that asks Redis, the free slot and grant
// units it takes first (takeGrant) and settles once Redis answers
// (settle).

// payHere admits n units of e in window x from what this PoP holds, when
// that covers them: the grant balance, else the free slot of x (unused and
// leased), else the two together (the slot's c units first). It returns
// the Source and true, with the spends recorded as ops, or false with
// nothing spent.
func (m *Machine) payHere(e *entry, x, n int64) (Source, bool) {
	if m.spendGrant(e, x, n) {
		return SrcGrant, true
	}
	c := m.credit(x, m.group(int(e.bucket)))
	if c == 0 || x <= e.claimed {
		return 0, false
	}
	if n <= c {
		e.useFree(x)
		e.addOp(Op{X: x, GW: GWFree, U: n})
		return SrcFree, true
	}
	if m.balance(e, x)+c >= n {
		e.useFree(x)
		e.addOp(Op{X: x, GW: GWFree, U: c})
		m.spendGrant(e, x, n-c)
		return SrcGrant, true
	}
	return 0, false
}

// paysHere reports whether payHere would pay n units of e in window x,
// spending nothing.
func (m *Machine) paysHere(e *entry, x, n int64) bool {
	b := m.balance(e, x)
	if b >= n {
		return true
	}
	c := m.credit(x, m.group(int(e.bucket)))
	return c > 0 && x > e.claimed && b+c >= n
}

// payHereLate is payHere at now, the arrival of Redis' denial of a
// request of n units, unless the deny cache rules e out as it would a
// request made now: Redis may have denied the request for units it had
// granted this PoP meanwhile (another Call's reply brought them while
// this one was out), or the reply may land in a window whose free slot
// is still this PoP's. They are this PoP's to spend, so the request is
// admitted from them, as decide would admit it now; denying it spent
// them on the next request instead and denied one the limit admits (a
// near-limit client pinned to one PoP was wrongly limited on pop-sim's
// mixed, and a crowd over 100 ms was served 94.8% of pure Redis' quota,
// 96.2% with this: docs/budget.md, Rules, "Paying a request").
func (m *Machine) payHereLate(now int64, e *entry, n int64) (Source, bool) {
	if now < e.denyUntil {
		return 0, false
	}
	return m.payHere(e, m.window(now), n)
}

// settle reports the free slot and grant units decision Call c's request
// took: used (its units admitted: the slot claimed with them, the grant's
// spent) or not (the slot given up unused, claimed with no units, so
// Redis decides them again; the grant's units back in its balance if the
// grant is still live).
func (m *Machine) settle(c *Call, used bool) {
	p := c.req
	if p.slot > 0 {
		u := int64(0)
		if used {
			u = p.slot
		}
		p.e.addOp(Op{X: p.x, GW: GWFree, U: u})
		m.mark(p.e)
	}
	for _, t := range p.took {
		switch {
		case t.bal == 0:
		case used:
			p.e.addOp(Op{X: p.x, GW: t.win, U: t.bal})
		default:
			for i := range p.e.grants {
				if p.e.grants[i].win == t.win {
					p.e.grants[i].bal += t.bal
				}
			}
		}
	}
}

// balance is e's live grant balance in window x (grants of x−1 and x).
func (m *Machine) balance(e *entry, x int64) int64 {
	var have int64
	for _, g := range e.grants {
		if g.bal > 0 && (g.win == x || g.win == x-1) {
			have += g.bal
		}
	}
	return have
}

// takeGrant takes up to n units from e's live grants in window x, the
// older first, recording no spend (settle does), and returns what it took
// of each.
func (m *Machine) takeGrant(e *entry, x, n int64) [2]grantSlot {
	var took [2]grantSlot
	order := []int{0, 1}
	if e.grants[1].win < e.grants[0].win {
		order = []int{1, 0}
	}
	for j, i := range order {
		g := &e.grants[i]
		if n == 0 || g.bal == 0 || (g.win != x && g.win != x-1) {
			continue
		}
		u := min(n, g.bal)
		g.bal -= u
		n -= u
		took[j] = grantSlot{win: g.win, bal: u}
	}
	return took
}

// spendGrant takes n units from e's live grants (granted in window x−1 or
// x, the older first) when they hold that many, recording the spend.
func (m *Machine) spendGrant(e *entry, x, n int64) bool {
	if m.balance(e, x) < n {
		return false
	}
	for _, t := range m.takeGrant(e, x, n) {
		if t.bal > 0 {
			e.addOp(Op{X: x, GW: t.win, U: t.bal})
		}
	}
	return true
}
