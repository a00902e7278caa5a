package hybrid

// pendingSet is the identities with hits not yet sent (to Redis, or by
// gossip), in the order they were queued: a Sync's batches and a Gossip's
// payloads take them first-queued first, so no identity waits behind
// others queued after it, and a driver that queues in a fixed order (the
// simulator) sends in that order, run after run. Guarded by Node.mu.
type pendingSet struct {
	m     map[string]*entry
	order []*entry // queued entries; one deleted since (see del) is skipped by take
}

func newPendingSet() pendingSet { return pendingSet{m: map[string]*entry{}} }

func (s *pendingSet) len() int { return len(s.m) }

func (s *pendingSet) get(key string) *entry { return s.m[key] }

// add queues e (not already in the set).
func (s *pendingSet) add(e *entry) {
	s.m[e.key] = e
	s.order = append(s.order, e)
}

// del removes key; its place in order is dropped by the next take.
func (s *pendingSet) del(key string) { delete(s.m, key) }

// take empties the set and returns its entries in queue order, each once.
func (s *pendingSet) take() []*entry {
	out := make([]*entry, 0, len(s.m))
	for _, e := range s.order {
		if s.m[e.key] == e {
			out = append(out, e)
			delete(s.m, e.key)
		}
	}
	clear(s.order)
	s.order = s.order[:0]
	clear(s.m)
	return out
}
