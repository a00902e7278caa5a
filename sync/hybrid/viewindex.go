package hybrid

// viewIndex is one view shard's key → entry index: an open-addressing hash
// table with linear probing whose slots hold the key's hash beside the
// entry. A lookup reads one run of adjacent slots and dereferences only an
// entry whose stored hash matches, where the key comparison loads the line
// the caller reads next; golang-lru's map of list elements (the view's
// index before) took three dependent loads more (the map's control word,
// its slot, the element) and an object of 80 bytes per identity. Deletion
// shifts the run back (no tombstones), so a lookup never scans past the
// first empty slot. The table doubles when three quarters full and never
// shrinks, as a Go map. Its zero value is an empty index; it is not safe
// for concurrent use (the shard's lock guards it).
type viewIndex struct {
	slots []viewSlot // len a power of two, or 0
	n     int        // entries held
}

// viewSlot is one slot: e nil when empty; h the hash of e.key.
type viewSlot struct {
	h uint64
	e *entry
}

// home is the slot a hash probes first. The low bits pick the view shard
// (viewLRU.shard), so the table takes the high ones.
func (t *viewIndex) home(h uint64) int {
	return int((h >> 32) & uint64(len(t.slots)-1))
}

// find returns the slot of key (hash h), or -1.
func (t *viewIndex) find(h uint64, key string) int {
	if t.n == 0 {
		return -1
	}
	mask := len(t.slots) - 1
	for i := t.home(h); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.e == nil {
			return -1
		}
		if s.h == h && s.e.key == key {
			return i
		}
	}
}

// get returns key's entry (hash h), or nil.
func (t *viewIndex) get(h uint64, key string) *entry {
	if i := t.find(h, key); i >= 0 {
		return t.slots[i].e
	}
	return nil
}

// put stores e under hash h of e.key, which must not be held.
func (t *viewIndex) put(h uint64, e *entry) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	t.place(viewSlot{h: h, e: e})
	t.n++
}

// place writes s into the first empty slot of its probe run.
func (t *viewIndex) place(s viewSlot) {
	mask := len(t.slots) - 1
	i := t.home(s.h)
	for t.slots[i].e != nil {
		i = (i + 1) & mask
	}
	t.slots[i] = s
}

// grow doubles the table (8 slots at first) and re-places every entry.
func (t *viewIndex) grow() {
	old := t.slots
	t.slots = make([]viewSlot, max(8, 2*len(old)))
	for _, s := range old {
		if s.e != nil {
			t.place(s)
		}
	}
}

// del removes the entry at slot i and shifts back the slots after it in
// its run that probing would otherwise no longer reach.
func (t *viewIndex) del(i int) {
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].e != nil; j = (j + 1) & mask {
		// The slot at j may move to the hole at i unless its home lies
		// cyclically in (i, j]: then i is before where probing starts.
		if h := t.home(t.slots[j].h); (j-h)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = viewSlot{}
	t.n--
}

// remove drops key (hash h) and returns its entry, or nil.
func (t *viewIndex) remove(h uint64, key string) *entry {
	i := t.find(h, key)
	if i < 0 {
		return nil
	}
	e := t.slots[i].e
	t.del(i)
	return e
}
