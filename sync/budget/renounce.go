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
// an entry; 94 with maps that hold no deleted slots). When the window
// moves on by d, the maps shift by d and those past recs[2] are dropped
// whole, after the records in them that were extended since are filed
// again in a live map (carry): a record whose slots reach only to x−2 or
// before is gone with its map, since Machine.forgot covers those windows
// (forget.go) and a request stamped late in one of them still spends no
// free credit there. Their claims go in the next Tick's batch of their
// group (toClaim), one item each, as a full entry's would. Each key is in
// at most one map.
type renounced struct {
	recs    [3]map[string]int64 // key → its record, packed (packRecord)
	renX    int64
	toClaim []HotKey // records whose claims a Tick has yet to send
}

// packRecord packs a record: its slots are given up through window
// through, its claims sent through window sent. A sent more than three
// windows before through is stored as through−3, which means the same
// (every store happens with Machine.forgot at least renX−2 and through
// at most renX+1, and no claim goes for a window forgot covers), and a
// sent past through as through. through must be within ±2⁶¹ windows
// (times within about 73 million years of 1970 at 1 ms windows).
func packRecord(through, sent int64) int64 {
	d := through - min(max(sent, through-3), through)
	return through<<2 | d
}

// unpackRecord is packRecord's inverse.
func unpackRecord(v int64) (through, sent int64) {
	through = v >> 2
	return through, through - v&3
}

// find returns key's record and the index of the map holding it.
func (r *renounced) find(key string) (i int, through, sent int64, ok bool) {
	for i := range r.recs {
		if v, ok := r.recs[i][key]; ok {
			through, sent = unpackRecord(v)
			return i, through, sent, true
		}
	}
	return 0, 0, 0, false
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
// changes nothing).
func (m *Machine) rollRenounced(x int64) {
	r := &m.ren
	if x <= r.renX {
		return
	}
	d := x - r.renX
	if r.renX == math.MinInt64 || d >= int64(len(r.recs)) {
		d = int64(len(r.recs))
	}
	n := int64(len(r.recs))
	gone := r.recs // the maps shifted out are gone[n−d:]
	for i := n - 1; i >= 0; i-- {
		if j := i - d; j >= 0 {
			r.recs[i] = r.recs[j]
		} else {
			r.recs[i] = nil
		}
	}
	r.renX = x
	m.forget(x - 2) // the records dropped covered windows up to x−2 at most
	// carry: records of the dropped maps extended past x−2 since they were
	// filed are filed again (a record reaches renX+1 at most, so none is
	// live when d covered every map)
	for _, recs := range gone[n-d:] {
		for key, v := range recs {
			if through, sent := unpackRecord(v); through > x-2 {
				r.file(key, through, sent)
			}
		}
	}
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
	if i, through, sent, ok := r.find(h.Key); ok {
		if through >= x+1 {
			return // given up through x+1 or later already
		}
		r.recs[i][h.Key] = packRecord(x+1, max(sent, m.forgot))
	} else {
		r.file(h.Key, x+1, m.forgot)
	}
	r.toClaim = append(r.toClaim, h)
}

// renouncedThrough reports the window key's slots are given up through
// and how far its claims were sent, if a record covers window x.
func (m *Machine) renouncedThrough(key string, x int64) (through, sent int64, ok bool) {
	_, through, sent, found := m.ren.find(key)
	return through, sent, found && x <= through
}

// unrenounce moves key's record, if any, into e, a new full entry: its
// slots stay given up, its claims sent stay sent, and claims not sent
// yet go with e's next item.
func (m *Machine) unrenounce(e *entry) {
	i, through, sent, ok := m.ren.find(e.key)
	if !ok {
		return
	}
	delete(m.ren.recs[i], e.key)
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
	r := &m.ren
	left := r.toClaim[:0]
	for _, h := range r.toClaim {
		i, through, sent, ok := r.find(h.Key)
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
		r.recs[i][h.Key] = packRecord(through, through)
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
	return n
}
