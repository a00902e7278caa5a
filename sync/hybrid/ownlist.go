package hybrid

import "sync"

// minOwnSweep is the fewest entries an ownList holds before growth alone
// makes a sweep due (see ownList.due).
const minOwnSweep = 1024

// ownList lists the entries that took own counts since a sweep last found
// them without any: every entry, cached or parked, holding own counts in
// its live windows is listed (entry.listed), so a walk over own counts
// (queueWhere) visits those instead of every identity the view only heard
// of, most of a view's at an edge. The admission that gives an entry own
// counts lists it (Node.addOwn, with the entry's lock held); a sweep
// (Node.sweepOwn) unlists those whose counts left the live windows. An
// entry that left the view (gone) stays listed while it holds own counts:
// a pending set may still revive it. Its lock is a leaf: taken with an
// entry's lock held, and nothing is locked under it. The zero value is an
// empty list.
type ownList struct {
	mu   sync.Mutex
	es   []*entry
	kept int // entries a sweep left listed, for due
}

// add lists e, whose lock the caller holds and which is not listed.
func (l *ownList) add(e *entry) {
	e.listed = true
	l.mu.Lock()
	l.es = append(l.es, e)
	l.mu.Unlock()
}

// take hands the listed entries to a sweep, leaving the list empty; the
// sweep gives back those still listed with putBack.
func (l *ownList) take() []*entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	es := l.es
	l.es = nil
	return es
}

// putBack lists es again after a sweep, beside those added meanwhile.
func (l *ownList) putBack(es []*entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.es = append(l.es, es...)
	l.kept = len(l.es)
}

// due reports whether the list doubled since its last sweep (and holds
// minOwnSweep entries): then a Sync sweeps it even when no walk over own
// counts is due (Resync negative), so it holds at most about twice the
// entries with own counts, not every identity ever admitted.
func (l *ownList) due() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.es) >= max(2*l.kept, minOwnSweep)
}

// addOwn counts w units admitted in window win in e (locked; see
// entry.addOwn) and lists e when that gave it own counts.
func (n *Node) addOwn(e *entry, win, w int64) {
	e.addOwn(win, w)
	if !e.listed && e.own != (counts{}) {
		n.owned.add(e)
	}
}

// sweepOwn rolls every listed entry to window idx, unlists those without
// own counts, and returns those that are in the view (not gone) and for
// which keep (called with the entry's lock held) is true; keep nil
// returns none.
func (n *Node) sweepOwn(idx int64, keep func(*entry) bool) []*entry {
	es := n.owned.take()
	listed, kept := es[:0], []*entry(nil)
	for _, e := range es {
		e.mu.Lock()
		e.roll(idx)
		if e.own == (counts{}) {
			e.listed = false
		} else {
			listed = append(listed, e)
			if !e.gone && keep != nil && keep(e) {
				kept = append(kept, e)
			}
		}
		e.mu.Unlock()
	}
	clear(es[len(listed):])
	n.owned.putBack(listed)
	return kept
}
