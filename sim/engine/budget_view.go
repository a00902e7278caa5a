package engine

// releaseMachines measures the Go heap the live PoPs' Machines hold, then
// drops them: the heap
// live after a full collection with the Machines, minus the same without
// them, divided by the entries of their views (Machine.Len) and by the
// identities of the run. Crashed incarnations are kept, and not counted.
// Call it once the run is over (every call landed, Stats read); nil when
// the views hold no entry.
func (s *budgetSim) releaseMachines() *ViewMemory {
	var entries int64
	for _, m := range s.ms {
		entries += int64(m.Len())
	}
	pops := len(s.ms)
	with := liveHeap()
	clear(s.ms)
	s.ms = nil
	freed := with - liveHeap()
	if entries == 0 {
		return nil
	}
	ids := s.e.identitiesSeen()
	return &ViewMemory{HeapBytes: freed, Entries: entries,
		EntriesPerPoP: float64(entries) / float64(pops),
		BytesPerEntry: float64(freed) / float64(entries),
		Identities:    ids, BytesPerIdentity: float64(freed) / float64(max(ids, 1))}
}
