package budget

import "math"

// A Machine forgets state by window: light records two windows old and
// renounced records three windows after the one they were named in are
// dropped whole when the window moves on, and a full entry is dropped once
// nothing of it reaches past the window before the Tick's (idle). What
// goes with them is which free slots of those windows this PoP used or
// gave up. A request whose time was read in such a window can still
// arrive (a caller's clock, or its time read before a slow handoff), and
// its identity would start afresh: a free slot spent twice, or one given
// up and then spent, passes the limit by the free credit.
//
// Invariant: forgot is at least every window whose slot state the Machine
// may have dropped, and at most two windows before the newest window a
// tier rolled to. The tiers' rolls set it (rollLight, rollRenounced). A
// full entry is dropped only by a Tick at window x, which rolled both
// tiers to x (forgot x−2), and only when nothing of it reaches past x−1
// (idle); retire keeps a slot of x−1 it consumed as a renounced record. A
// request stamped in a window up to forgot spends no free credit there
// (freeLight refuses it; a new full entry starts with its slots consumed
// and claimed through forgot), and no claim is sent for such a window
// (claims start after forgot: a slot used by a dropped light record,
// given up again, would free a unit the record spent unreported); the
// request's later windows are claimed as usual. The windows after forgot
// keep their exact state, so an identity new in the newest window still
// gives up its slot of the window before (claims start at x−1).
//
// A tier rolls with the windows it is handed, and a request may be stamped
// ahead of the PoP's clock (a caller's own time): rolled two windows
// early, a tier would drop the state of the window the PoP is still in,
// and forgot would follow, so every identity new in it would lose its free
// credit there. So the tiers roll at most one window past the last Tick's
// (ahead): a request stamped further ahead is decided on a full entry,
// free credit and all, and a naming Redis makes further ahead waits for
// its next one. Such a request's decision Call renews no lease (Redis
// would count this PoP from that window on and skip the windows between,
// ending its free credit until its clock got there) and carries no
// report; Redis counts a free unit of a window after its own in its own
// window and claims no slot with it (TestFarStampKeepsTheLease,
// TestEarlyFreeOpClaimsTheWrongSlot). A reply about such a window does not
// stay Redis' last count of the identity over the PoP's own window's. One window ahead, the tier does roll: the window before
// the PoP's is then forgotten, and identities new in the PoP's window
// keep their slot of the window before reserved at Redis until its clock
// catches up (quota, not safety).
//
// TestForgottenWindows, TestForgottenRecords, TestRetiredEntryKeepsItsLastSlot,
// TestEarlyStampKeepsTheCurrentWindow and TestPropertySlots catch each
// part's removal.

// ahead reports whether window x is more than one window past the last
// Tick's (never before the first Tick).
func (m *Machine) ahead(x int64) bool { return m.tickX != math.MinInt64 && x > m.tickX+1 }

// forget records that state about windows up to y may be gone.
func (m *Machine) forget(y int64) { m.forgot = max(m.forgot, y) }

// fresh starts new full entry e, made at this PoP for the first time or
// again after it was forgotten, as having consumed and claimed its slots
// of the windows the Machine may have forgotten.
func (m *Machine) fresh(e *entry) {
	e.claimed, e.sentClaims = max(e.claimed, m.forgot), max(e.sentClaims, m.forgot)
}

// retire drops idle full entry e at a Tick of window x (the tiers rolled
// to x): a slot of x−1 it consumed, used or given up, stays consumed as a
// renounced record covering x−1 with nothing to claim (a used slot given
// up would free the unit it admitted); older windows forgot covers.
func (m *Machine) retire(e *entry) {
	r := &m.ren
	if i := r.renX + 1 - e.claimed; e.claimed > m.forgot && i >= 0 && i < int64(len(r.recs)) {
		r.file(e.key, e.claimed, e.claimed)
	}
	m.drop(e)
}
