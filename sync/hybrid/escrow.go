package hybrid

import (
	"context"

	"github.com/edgelimit/edgelimit/sync/reconcile"
)

// escrowState is one identity's escrowed allowance at this PoP (with
// Config.Escrow): units it may admit without asking until exp (ms), as
// Redis granted them less what was admitted since the snapshot the grant
// answered. Guarded by the entry's mu.
type escrowState struct {
	allow  int64 // units left
	exp    int64 // ms after which allow (or owner) is void
	owner  bool  // the identity is this PoP's alone until exp: admit what the view admits
	adds   int64 // every own unit ever counted in the entry (monotonic), to charge a grant what came after its snapshot
	demand int64 // units requested within the margin since the last snapshot: the next Sync's want
}

// escrowOf is e's escrow state, made on first use. Called with e.mu held,
// only with Config.Escrow.
func escrowOf(e *entry) *escrowState {
	if e.escrow == nil {
		e.escrow = &escrowState{}
	}
	return e.escrow
}

// take spends w units of allowance at now, if it holds them.
func (s *escrowState) take(now, w int64) bool {
	if s.allow < w || now >= s.exp {
		return false
	}
	s.allow -= w
	return true
}

// owns reports whether this PoP holds the identity alone at now: Redis
// grants nothing to any other PoP, so the view's count of the others is
// Redis' and its own is exact, and the article's rule on the view decides
// as pure Redis would (see reconcile.Grant).
func (s *escrowState) owns(now int64) bool { return s.owner && now < s.exp }

// renewDue reports whether an owner should Sync the identity to keep it:
// past half its lease. An owner's Syncs renew it, but an identity over its
// limit admits nothing and would not be carried by one; without this it
// would lose ownership while saturated and deny, for want of a grant, the
// first units the window frees.
func (s *escrowState) renewDue(now, lease int64) bool {
	return s.owner && now >= s.exp-lease/2
}

// charge takes w units admitted outside the allowance (far below the
// limit) out of it too: Redis takes every new unit out of the grant, and
// the PoP must not believe it holds more than Redis counts.
func (s *escrowState) charge(w int64) { s.allow = max(s.allow-w, 0) }

// want is the allowance the next Sync asks for: twice the demand seen
// since the last one (0 when none: calm identities hold no grant). With
// ownerOnly (Config.Owners) it is -1 when there was demand: ownership,
// and no units.
func (s *escrowState) want(ownerOnly bool) int64 {
	w := 2 * s.demand
	s.demand = 0
	if ownerOnly && w > 0 {
		return -1
	}
	return w
}

// granted applies a batch's grant, charged for the units counted since the
// snapshot it answered (adds then: snapAdds). It reports whether the PoP
// lost ownership: Redis keeps the other PoPs out until its next Sync of
// the identity reports what it admitted meanwhile, so that Sync must come.
func (s *escrowState) granted(g reconcile.Grant, snapAdds int64) (released bool) {
	released = s.owner && !g.Owner
	s.allow = max(g.Units-(s.adds-snapAdds), 0)
	s.exp = g.Expiry
	s.owner = g.Owner
	return released
}

// restoreDemand gives a failed batch's identities back the demand its
// snapshot took (want), so the next Sync asks for their allowance again.
func restoreDemand(c *Call) {
	for i, e := range c.batch {
		e.mu.Lock()
		escrowOf(e).demand += max(c.wants[i]/2, -c.wants[i]) // -1 (Config.Owners) was one unit at least
		e.mu.Unlock()
	}
}

// escrowItems are a batch's items with their wants, read at the snapshot
// (which called want under each entry's lock).
func escrowItems(items []reconcile.Item, wants []int64, owned []bool) []reconcile.EscrowItem {
	out := make([]reconcile.EscrowItem, len(items))
	for i, it := range items {
		out[i] = reconcile.EscrowItem{Item: it, Want: wants[i], Owned: owned[i]}
	}
	return out
}

// flushEscrow makes an escrow batch's call: Store.FlushEscrow with the
// limit, the window position at the Sync's now and the lease.
func (n *Node) flushEscrow(ctx context.Context, c *Call) {
	c.res, c.grants, c.err = n.store.FlushEscrow(ctx, escrowItems(c.items, c.wants, c.owned), n.escrowParams(c))
}

// escrowParams are an escrow batch's parameters: the limit, the window
// position at the Sync's now and the lease.
func (n *Node) escrowParams(c *Call) reconcile.EscrowParams {
	_, elapsed := n.position(c.at)
	return reconcile.EscrowParams{Now: c.at, Elapsed: elapsed, WindowMillis: n.w,
		Max: n.cfg.Limit.Max, Lease: n.cfg.Lease}
}

// queueReleased queues for the next Sync the identities a reply took
// ownership from, past MaxPending if need be: Redis keeps the other PoPs
// out until that Sync reports what this PoP admitted as owner, so a
// dropped entry would block them until the record expires. The set grows
// by at most one entry per identity this PoP owned.
func (n *Node) queueReleased(es []*entry) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, e := range es {
		if !e.queuedRedis.Load() {
			put(&n.redisPending, e, &e.queuedRedis)
		}
	}
}
