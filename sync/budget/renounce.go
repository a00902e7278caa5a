package budget

import "math"

// Redis names hot (Finish) the identities whose free slots it still
// reserves while their limit nears, and every PoP gives up its slots of
// them (claims) so the reservation does not deny their last units. Many
// of the identities named to a PoP it holds nothing of: on pop-sim's
// mixed at 1,000,000 identities and 32 PoPs, 1,850 of a view's 3,000 full
// entries were such identities (1,200 of 4,900 at 8 PoPs), each a
// 224-byte entry that only carried its claims. An identity named hot that
// has neither a full entry nor a light record here is instead a renounced
// record: the window its slots of were last given up through and how far
// its claims were sent, 8 bytes beside its map key. Invariant: this PoP
// spends no free credit of the identity in a window whose slot it gave
// up: while a record covers the window, freeLight refuses and a full
// entry made of it starts with the record's claimed and sent windows;
// once the record is dropped, Machine.forgot covers the window
// (forget.go). TestRenouncedRecord, TestRenouncedNamings and
// TestForgottenRecords check it (the light tier ignoring records fails
// the first); the property tests' random runs rarely name a PoP an
// identity it then first sees in a covered window (that mutation passed 3
// runs of TestPropertyBudget and of TestPropertyLease).
//
// Records live in three maps by the window through which their slots were
// given up when they were filed: recs[i] holds those filed through window
// renX+1−i. A record named again in a later window is extended where it
// is (its value holds how far it now reaches), not moved: a move left a
// deleted slot behind in the older map, which a Go map never gives back
// (on pop-sim's mixed at 1,000,000 identities and 32 PoPs, 190,000 moves
// left the records' maps at 67 bytes a record, the view at 100.7 bytes
// an entry; 92.6 without the moves). When the window moves on by d, the
// maps shift by d and those past recs[2] leave: a record in them whose
// slots reach only to x−2 or before is gone, since Machine.forgot covers
// those windows (forget.go) and a request stamped late in one of them
// still spends no free credit there; one extended since it was filed is
// filed again in a live map (carried). Carrying is spread over the Ticks
// (carryRecords), a bounded number at each, so a PoP that thousands of
// identities stay hot at pays no pause when the window moves on (100,000
// records carried at once took 39 ms); until then a record waits in
// carry, where lookups find it too. A record that waits reaches the
// window its map left at, at most (it was extended only while live), so
// a map three windows out of recs holds nothing live and is dropped whole;
// a waiting record named again moves to a live map at once. Carrying is
// for memory: what waits is found where it waits, and the map it leaves
// empty is dropped. Each key has at most one record that is not gone (a
// waiting one reaching renX−2 at most is gone to lookups, and may stay
// beside a newer one until carryRecords drops it). The records' claims go
// in the next Tick's batch of their group (toClaim), one item each, as a
// full entry's would.
type renounced struct {
	recs    [3]map[string]int64 // key → its record, packed (packRecord)
	renX    int64
	carry   []carrying // maps that left recs, oldest first
	toClaim []HotKey   // records whose claims a Tick has yet to send
}

// carrying is a map that left recs at window x, whose records are carried
// at most per at each Tick.
type carrying struct {
	recs map[string]int64
	x    int64
	per  int
}

// carryMin is the fewest records a Tick carries when some wait.
const carryMin = 1024

// packRecord packs a record: its slots are given up through window
// through, its claims sent through window sent. A sent more than three
// windows before through is stored as through−3, which means the same
// (every store happens with Machine.forgot at least renX−2 and through
// at most renX+1, and no claim goes for a window forgot covers), and a
// sent past through as through. Only through's low 62 bits are kept
// (unpackRecord recovers the rest), so any window packs.
func packRecord(through, sent int64) int64 {
	d := through - min(max(sent, through-3), through)
	return through<<2 | d
}

// unpackRecord is packRecord's inverse for a record whose through is at
// most base and within 2⁶² of it: a live map's records reach from renX−1
// to renX+1 (base renX+1), a waiting map's at most the window it left
// the live maps at (base carrying.x).
func unpackRecord(v, base int64) (through, sent int64) {
	through = base - (base-v>>2)&(1<<62-1)
	return through, through - v&3
}

// find returns key's record and the map holding it: live, or waiting in
// carry (waiting true); a waiting record reaching renX−2 at most is gone
// (carryRecords would drop it), and not found. A record is changed in
// its map but for its through, which only a live map's record may extend.
func (r *renounced) find(key string) (in map[string]int64, through, sent int64, waiting, ok bool) {
	for _, recs := range r.recs {
		if v, ok := recs[key]; ok {
			through, sent = unpackRecord(v, r.renX+1)
			return recs, through, sent, false, true
		}
	}
	for _, c := range r.carry {
		if v, ok := c.recs[key]; ok {
			through, sent = unpackRecord(v, c.x)
			if through <= r.renX-2 {
				continue // gone: forgot covers its windows (carryRecords drops it); a newer map may hold the key again
			}
			return c.recs, through, sent, true, true
		}
	}
	return nil, 0, 0, false, false
}

// file adds a record for key, which has none, to the map of the windows
// through which its slots are given up (0 ≤ renX+1−through < 3).
func (r *renounced) file(key string, through, sent int64) {
	i := r.renX + 1 - through
	if r.recs[i] == nil {
		r.recs[i] = map[string]int64{}
	}
	r.recs[i][key] = packRecord(through, sent)
}

// rollRenounced brings the records to window x (a clock behind them
// changes nothing): the maps that leave recs wait in carry, and those
// that left it three or more windows ago are dropped (every record in
// them reaches x−2 at most).
func (m *Machine) rollRenounced(x int64) {
	r := &m.ren
	if x <= r.renX {
		return
	}
	n := int64(len(r.recs))
	d := x - r.renX
	if r.renX == math.MinInt64 || d >= n {
		d = n
	}
	left := r.recs // the maps that leave are left[n−d:]
	for i := n - 1; i >= 0; i-- {
		if j := i - d; j >= 0 {
			r.recs[i] = r.recs[j]
		} else {
			r.recs[i] = nil
		}
	}
	kept := r.carry[:0]
	for _, c := range r.carry {
		if c.x > x-n {
			kept = append(kept, c)
		}
	}
	clear(r.carry[len(kept):])
	r.carry = kept
	if r.renX != math.MinInt64 && x-r.renX < n {
		// spread over half a window's Ticks, at least carryMin a Tick
		ticks := max(1, m.w/max(1, 2*m.cfg.SyncInterval.Milliseconds()))
		for _, recs := range left[n-d:] {
			if len(recs) > 0 {
				r.carry = append(r.carry, carrying{recs: recs, x: x, per: max(carryMin, int((int64(len(recs))+ticks-1)/ticks))})
			}
		}
	}
	r.renX = x
	m.forget(x - 2) // the records dropped covered windows up to x−2 at most
}

// carryRecords files again in a live map, or drops, at most per records
// (the oldest waiting map's) of the maps waiting in carry, oldest first:
// records reaching past renX−2 are filed, the others are gone (forgot
// covers their windows).
func (m *Machine) carryRecords() {
	r := &m.ren
	if len(r.carry) == 0 {
		return
	}
	left := r.carry[0].per
	for len(r.carry) > 0 {
		c := &r.carry[0]
		for key, v := range c.recs {
			if left == 0 {
				return
			}
			delete(c.recs, key)
			left--
			if through, sent := unpackRecord(v, c.x); through > r.renX-2 {
				r.file(key, through, sent)
			}
		}
		r.carry[0] = carrying{}
		r.carry = r.carry[1:]
	}
	r.carry = nil
}

// renounce gives up this PoP's free slots of h through window x+1, Redis
// having named it hot at x: h has no full entry nor light record here.
func (m *Machine) renounce(h HotKey, x int64) {
	if m.ahead(x) {
		return // Redis' clock ahead of this PoP's: its next naming files it
	}
	m.rollRenounced(x)
	r := &m.ren
	if r.renX-x >= int64(len(r.recs)) || x+1 <= m.forgot {
		return // its windows are forgotten already: no free credit in them here
	}
	if in, through, sent, waiting, ok := r.find(h.Key); ok {
		if through >= x+1 {
			return // given up through x+1 or later already
		}
		if waiting {
			// a map in carry is dropped three windows after it left recs,
			// whatever its records reach: file it in a live map instead
			delete(in, h.Key)
			r.file(h.Key, x+1, max(sent, m.forgot))
		} else {
			in[h.Key] = packRecord(x+1, max(sent, m.forgot))
		}
	} else {
		r.file(h.Key, x+1, m.forgot)
	}
	r.toClaim = append(r.toClaim, h)
}

// renouncedThrough reports the window key's slots are given up through
// and how far its claims were sent, if a record covers window x.
func (m *Machine) renouncedThrough(key string, x int64) (through, sent int64, ok bool) {
	_, through, sent, _, found := m.ren.find(key)
	return through, sent, found && x <= through
}

// unrenounce moves key's record, if any, into e, a new full entry: its
// slots stay given up, its claims sent stay sent, and claims not sent
// yet go with e's next item.
func (m *Machine) unrenounce(e *entry) {
	in, through, sent, _, ok := m.ren.find(e.key)
	if !ok {
		return
	}
	delete(in, e.key)
	e.claimed, e.sentClaims = max(e.claimed, through), max(e.sentClaims, sent)
	if sent < through {
		e.renounce = true
		m.mark(e)
	}
}

// planClaims adds to batches the items of the records whose claims are
// unsent, at now in window x, for the groups that may send a batch (none
// in flight or to be sent again); the others' wait for a later Tick.
func (m *Machine) planClaims(batches []*Call, x, now int64) {
	m.rollRenounced(x)
	m.carryRecords()
	r := &m.ren
	left := r.toClaim[:0]
	for _, h := range r.toClaim {
		in, through, sent, _, ok := r.find(h.Key)
		if !ok || x > through || sent >= through {
			continue // promoted, dropped with its window, or sent
		}
		g := m.group(h.Bucket)
		if gs := &m.groups[g]; gs.inflight != nil || gs.retry != nil {
			left = append(left, h)
			continue
		}
		var claims []int64
		for y := max(sent+1, x-1, m.forgot+1); y <= through; y++ { // never a forgotten window (forget.go)
			claims = append(claims, y)
		}
		in[h.Key] = packRecord(through, through)
		if batches[g] == nil {
			batches[g] = &Call{Group: g, Now: now}
		}
		batches[g].Items = append(batches[g].Items, Item{Key: h.Key, Bucket: h.Bucket, Claims: claims})
	}
	clear(r.toClaim[len(left):])
	r.toClaim = left
}

// renouncedLen is the number of renounced records.
func (m *Machine) renouncedLen() int {
	n := 0
	for _, r := range m.ren.recs {
		n += len(r)
	}
	for _, c := range m.ren.carry {
		n += len(c.recs)
	}
	return n
}
