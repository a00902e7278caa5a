package budget

import (
	"math"

	"github.com/edgelimit/edgelimit/core"
)

// The view has three tiers (the third: renounce.go). Most identities a PoP
// sees never pass its free
// credit: one request of at most FreeCredit units per window, nothing to
// ask Redis, nothing to report (an unreported free unit sits inside Redis'
// reservation R). Such an identity is a light record: the units of its
// free request in its last window and in the window before, and when in
// its window the last one came, 8 bytes beside its map key (a map slot of
// 24 bytes with the key's header, where a 16-byte record made it 32). It
// becomes a full entry
// (promote) the first time it needs anything else: a second request in a
// window, a request of more than the free credit, a Redis hot list naming
// it, a clock behind the tier's window, or Config.NoWait (whose Syncs
// prefetch a grant for every identity seen, so every identity is full).
// It is also promoted when two free requests in a row come less than a
// window apart: its rate then passes the free credit's one request a
// window, and a full entry's Syncs ask a grant ahead of its requests
// (topUp) as they would have had it been full from the start. A request of
// more than 65,535 units, or any request when the window is 2³² ms (about
// 49 days) or longer, has no light record (its units or its time in
// the window would not fit): its identity is a full entry. A promoted
// entry holds what the record implied: the free ops not yet reported, the
// used slots, its own counts for the fallback, the demand of the request
// just decided since the one before.
//
// Light records live in two maps by window: lights[0] holds those whose
// last free request fell in window lightX, lights[1] those of lightX−1.
// When the window moves on, lights[1] is dropped whole: an identity whose
// last request is two windows old holds nothing a later decision, claim or
// estimate reads (the state Tick's idle test asks of a full entry), so
// forgetting light records costs no sweep.
type light struct {
	u   uint16 // units of its free request in its last window
	pu  uint16 // units of its free request in the window before (0: none)
	off uint32 // when its last free request came: ms since its window's start
}

// lightMaxWindow is the longest window (ms) whose light records' offsets
// fit their uint32.
const lightMaxWindow = math.MaxUint32

// at is when rec's last free request came, rec being of window x.
func (m *Machine) at(rec light, x int64) int64 { return x*m.w + int64(rec.off) }

// rollLight brings the light tier to window x (a clock behind it changes
// nothing).
func (m *Machine) rollLight(x int64) {
	switch {
	case x <= m.lightX:
		return
	case x == m.lightX+1:
		m.lights[1], m.lights[0] = m.lights[0], nil
	default:
		m.lights = [2]map[string]light{}
	}
	m.lightX = x
	m.forget(x - 2) // the records dropped were of windows up to x−2
}

// freeLight reports whether the light tier admits n units of key at now
// from this PoP's free credit, recording it: key has no full entry (the
// caller's test) and its free credit of this window is unspent. False
// means the tier cannot decide and the caller promotes the identity.
func (m *Machine) freeLight(now int64, key string, n int64) bool {
	x := m.window(now)
	if m.cfg.NoWait || n <= 0 || n > min(m.creditOf(x, key), math.MaxUint16) || m.w > lightMaxWindow {
		return false
	}
	if x <= m.forgot || m.ahead(x) {
		return false // x forgotten, or ahead of the Ticks: a full entry decides it
	}
	if _, _, renounced := m.renouncedThrough(key, x); renounced {
		return false // its slot of x is given up here: a full entry decides it
	}
	m.rollLight(x)
	if x != m.lightX {
		return false
	}
	if _, spent := m.lights[0][key]; spent {
		return false
	}
	rec := light{u: uint16(n), off: uint32(now - x*m.w)}
	before, had := m.lights[1][key]
	beforeT := m.at(before, x-1)
	if had {
		delete(m.lights[1], key)
		rec.pu = before.u
	}
	if m.lights[0] == nil {
		m.lights[0] = map[string]light{}
	}
	m.lights[0][key] = rec
	if had && now-beforeT < m.w {
		// faster than one request a window: a full entry's Syncs follow
		// its rate from here (its demand: n since the request before)
		e := m.entry(key)
		e.lastPlan, e.demand, e.born = beforeT, n, beforeT
		m.mark(e)
	}
	return true
}

// promote moves key's light record, if any, into e, a new full entry: the
// slots its free requests used, their ops (not reported yet), its own
// counts and a demand rate of its last window's units.
func (m *Machine) promote(e *entry) {
	var rec light
	var last int64
	switch {
	case has(m.lights[0], e.key):
		rec, last = m.lights[0][e.key], m.lightX
		delete(m.lights[0], e.key)
	case has(m.lights[1], e.key):
		rec, last = m.lights[1][e.key], m.lightX-1
		delete(m.lights[1], e.key)
	default:
		return
	}
	m.stats.Promoted++
	if rec.pu > 0 {
		e.useFree(last - 1)
	}
	e.useFree(last)
	e.own = core.WindowState{Index: last, Cur: int64(rec.u), Prev: int64(rec.pu)}
	if rec.pu > 0 {
		e.addOp(Op{X: last - 1, GW: GWFree, U: int64(rec.pu)})
	}
	e.addOp(Op{X: last, GW: GWFree, U: int64(rec.u)})
	e.rate = float64(rec.u) / float64(m.w)
	e.born = m.at(rec, last) // seen here since its last free request, at least
	if rec.pu > 0 {
		e.born = min(e.born, last*m.w-1) // and since the window before's
	}
}

func has(l map[string]light, key string) bool {
	_, ok := l[key]
	return ok
}

// lightLen is the number of light records.
func (m *Machine) lightLen() int { return len(m.lights[0]) + len(m.lights[1]) }
