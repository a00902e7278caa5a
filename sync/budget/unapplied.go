package budget

// The script applies a claim only of a window from the one before Redis'
// window w to w+2 (lua/budget.lua): R of w−1..w+2 is what every check
// reads, and its state holds no later window. A claim of a later window
// is not applied. A PoP whose clock runs a little ahead of Redis' (a
// window boundary) sends claims through its own window plus giveUpAhead,
// which is w+3 at Redis; so do names Redis made in a later window than
// the call's. Taken as sent, such a slot stays reserved at Redis for the
// whole window though this PoP gave it up (quota: the PoPs that share the
// identity are denied its unit).
//
// So a reply tells which of an item's claims Redis ignored: those past
// Result.Window+2, Redis' window of that call. A retried call's reply
// tells nothing of them (its original ran at a time the reply does not
// give, and Redis' clock may have been set back since), nor does a call
// whose reply never came: their claims stay sent. The ignored ones are
// marked unsent again, and the next Sync sends them; they stay
// consumed here, so this PoP spends none of those slots meanwhile. A claim
// is marked unsent only when every slot this PoP sent after Redis' last
// accepted window was in that item: a later item that claimed one of them
// may have been applied, and a slot claimed twice hides another PoP's
// (safety). Such a later item carries the same claims when the window
// had not moved on, so at worst the slot stays reserved as before.
// TestClaimTwoAheadNotDropped catches taking every claim sent as applied.

// unapplied marks the claims of e's item that Redis ignored (past w+2,
// w the window of reply r) unsent, so the next Sync sends them again.
func (m *Machine) unapplied(e *entry, claims []int64, r *Result) {
	lim := r.Window + giveUpAhead
	if r.Retried || len(claims) == 0 || claims[len(claims)-1] <= lim || e.sentClaims <= lim {
		return
	}
	for y := max(lim+1, m.forgot+1); y <= e.sentClaims; y++ {
		if !e.used(y) && !contains(claims, y) {
			return // sent in another item, which Redis may have applied
		}
	}
	e.sentClaims = lim
	e.renounce = true // the next Sync sends them (claims)
	m.mark(e)
}

// unappliedRecord is unapplied for a renounced record's item (planClaims):
// its claims past w+2 are marked unsent again, when the record still says
// they were its last sent, and the next Tick sends them.
func (m *Machine) unappliedRecord(key string, bucket int, claims []int64, r *Result) {
	lim := r.Window + giveUpAhead
	if r.Retried || len(claims) == 0 || claims[len(claims)-1] <= lim {
		return
	}
	rn := &m.ren
	in, through, sent, _, ok := rn.find(key)
	if !ok || lim+1 > through || sent != claims[len(claims)-1] {
		return // dropped, promoted, or sent again since
	}
	in[key] = packRecord(through, max(lim, m.forgot))
	rn.toClaim = append(rn.toClaim, HotKey{Key: key, Bucket: bucket})
}

func contains(s []int64, v int64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
