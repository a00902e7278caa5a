package budget

import "math"

// Redis names hot (Finish) the identities whose free slots it still
// reserves while their limit nears, and every PoP gives up its slots of
// them (claims) so the reservation does not deny their last units. Many
// of the identities named to a PoP it holds nothing of: on pop-sim's
// mixed at 1,000,000 identities and 32 PoPs, 1,850 of a view's 3,000 full
// entries were such identities (1,200 of 4,900 at 8 PoPs), each a
// 216-byte entry that only carried its claims. An identity named hot that
// has neither a full entry nor a light record here is instead a renounced
// record: the window its slots of were last given up through and how far
// its claims were sent, 8 bytes beside its map key. Invariant: while a
// record covers window x (its slots given up through x or later), this
// PoP spends no free credit of the identity in x (freeLight refuses, and a
// full entry made of it starts with the record's claimed and sent
// windows), so no slot it gave up is used. TestRenouncedRecord checks it
// (the light tier ignoring records fails it); the property tests' random
// runs rarely name a PoP an identity it then first sees in a covered
// window (that mutation passed 3 runs of TestPropertyBudget and of
// TestPropertyLease).
//
// Records live in two maps by window, as light records do: recs[0] holds
// those named in window renX (slots given up through renX+1), recs[1]
// those of renX−1 (through renX); when the window moves on, recs[1] is
// dropped whole, its slots' windows over. Their claims go in the next
// Tick's batch of their group (toClaim), one item each, as a full entry's
// would.
type renounced struct {
	recs    [2]map[string]int64 // key → the window its claims were sent through (math.MinInt64: none yet)
	renX    int64
	toClaim []HotKey // records whose claims a Tick has yet to send
}

// rollRenounced brings the records to window x (a clock behind them
// changes nothing).
func (m *Machine) rollRenounced(x int64) {
	r := &m.ren
	switch {
	case x <= r.renX:
		return
	case x == r.renX+1:
		r.recs[1], r.recs[0] = r.recs[0], nil
	default:
		r.recs = [2]map[string]int64{}
	}
	r.renX = x
}

// renounce gives up this PoP's free slots of h through window x+1, Redis
// having named it hot at x: h has no full entry nor light record here.
func (m *Machine) renounce(h HotKey, x int64) {
	m.rollRenounced(x)
	r := &m.ren
	if x != r.renX {
		return // named in a window the records have left: Redis names it again
	}
	if _, ok := r.recs[0][h.Key]; ok {
		return // given up through x+1 already
	}
	sent, ok := r.recs[1][h.Key]
	if ok {
		delete(r.recs[1], h.Key)
	} else {
		sent = math.MinInt64
	}
	if r.recs[0] == nil {
		r.recs[0] = map[string]int64{}
	}
	r.recs[0][h.Key] = sent
	r.toClaim = append(r.toClaim, h)
}

// renouncedThrough reports the window key's slots are given up through
// and how far its claims were sent, if a record covers window x.
func (m *Machine) renouncedThrough(key string, x int64) (through, sent int64, ok bool) {
	r := &m.ren
	if sent, ok := r.recs[0][key]; ok && x <= r.renX+1 {
		return r.renX + 1, sent, true
	}
	if sent, ok := r.recs[1][key]; ok && x <= r.renX {
		return r.renX, sent, true
	}
	return 0, 0, false
}

// unrenounce moves key's record, if any, into e, a new full entry: its
// slots stay given up, its claims sent stay sent.
func (m *Machine) unrenounce(e *entry) {
	through, sent, ok := m.renouncedThrough(e.key, math.MinInt64)
	if !ok {
		return
	}
	delete(m.ren.recs[0], e.key)
	delete(m.ren.recs[1], e.key)
	e.claimed, e.sentClaims = max(e.claimed, through), max(e.sentClaims, sent)
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
		for y := max(sent+1, x-1); y <= through; y++ {
			claims = append(claims, y)
		}
		if through == r.renX+1 {
			r.recs[0][h.Key] = through
		} else {
			r.recs[1][h.Key] = through
		}
		if batches[g] == nil {
			batches[g] = &Call{Group: g, Now: now}
		}
		batches[g].Items = append(batches[g].Items, Item{Key: h.Key, Bucket: h.Bucket, Claims: claims})
	}
	clear(r.toClaim[len(left):])
	r.toClaim = left
}

// renouncedLen is the number of renounced records.
func (m *Machine) renouncedLen() int { return len(m.ren.recs[0]) + len(m.ren.recs[1]) }
