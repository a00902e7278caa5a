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
// Records live in three maps by the window they were named in: recs[i]
// holds those named in window renX−i, their slots given up through
// renX+1−i. When the window moves on by d, the maps shift by d and those
// past recs[2] are dropped whole: their slots' windows end two or more
// windows before the newest, which Machine.forgot covers (forget.go), so a
// request stamped late in one of them still spends no free credit there.
// Their claims go in the next Tick's batch of their group (toClaim), one
// item each, as a full entry's would.
type renounced struct {
	recs    [3]map[string]int64 // key → the window its claims were sent through (at least Machine.forgot when filed)
	renX    int64
	toClaim []HotKey // records whose claims a Tick has yet to send
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
	for i := len(r.recs) - 1; i >= 0; i-- {
		if j := int64(i) - d; j >= 0 {
			r.recs[i] = r.recs[j]
		} else {
			r.recs[i] = nil
		}
	}
	r.renX = x
	m.forget(x - 2) // the records dropped covered windows up to x−2 at most
}

// renounce gives up this PoP's free slots of h through window x+1, Redis
// having named it hot at x: h has no full entry nor light record here.
func (m *Machine) renounce(h HotKey, x int64) {
	if m.ahead(x) {
		return // Redis' clock ahead of this PoP's: its next naming files it
	}
	m.rollRenounced(x)
	r := &m.ren
	i := r.renX - x // the map of records named at x
	if i >= int64(len(r.recs)) || x+1 <= m.forgot {
		return // its windows are forgotten already: no free credit in them here
	}
	sent := m.forgot
	for j := range r.recs {
		if s, ok := r.recs[j][h.Key]; ok {
			if int64(j) <= i {
				return // given up through x+1 or later already
			}
			sent = max(sent, s)
			delete(r.recs[j], h.Key)
		}
	}
	if r.recs[i] == nil {
		r.recs[i] = map[string]int64{}
	}
	r.recs[i][h.Key] = sent
	r.toClaim = append(r.toClaim, h)
}

// renouncedThrough reports the window key's slots are given up through
// and how far its claims were sent, if a record covers window x.
func (m *Machine) renouncedThrough(key string, x int64) (through, sent int64, ok bool) {
	r := &m.ren
	for i := range r.recs {
		if sent, ok := r.recs[i][key]; ok {
			through := r.renX + 1 - int64(i)
			return through, sent, x <= through
		}
	}
	return 0, 0, false
}

// unrenounce moves key's record, if any, into e, a new full entry: its
// slots stay given up, its claims sent stay sent, and claims not sent
// yet go with e's next item.
func (m *Machine) unrenounce(e *entry) {
	through, sent, ok := m.renouncedThrough(e.key, math.MinInt64)
	if !ok {
		return
	}
	for i := range m.ren.recs {
		delete(m.ren.recs[i], e.key)
	}
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
		through, sent, ok := m.renouncedThrough(h.Key, x)
		if !ok || sent >= through {
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
		r.recs[r.renX+1-through][h.Key] = through
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
