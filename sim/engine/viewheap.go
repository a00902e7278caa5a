package engine

import (
	"context"
	"runtime"
)

// releaseViews measures the Go heap the live PoPs' Nodes hold, then closes
// and drops them (close skips them after): the heap live after a full
// collection with the Nodes, minus the same without them, divided by the
// entries of their views and by the identities of the run. Crashed incarnations are kept, and not counted.
// Call it once the outcome is complete (round trips tallied, last flush
// done): a Node's Close is what close would have done a moment later.
func (s *hybridSim) releaseViews() *ViewMemory {
	var entries int64
	for _, p := range s.pops {
		entries += int64(p.node.ViewLen())
	}
	with := liveHeap()
	for _, p := range s.pops {
		p.node.Close(context.Background())
		if p.nc != nil {
			p.nc.Close()
		}
		p.node, p.nc = nil, nil
	}
	freed := with - liveHeap()
	if entries == 0 {
		return nil
	}
	ids := s.e.identitiesSeen()
	return &ViewMemory{HeapBytes: freed, Entries: entries,
		EntriesPerPoP: float64(entries) / float64(len(s.pops)),
		BytesPerEntry: float64(freed) / float64(entries),
		Identities:    ids, BytesPerIdentity: float64(freed) / float64(max(ids, 1))}
}

// identitiesSeen counts the distinct identities that made a request.
func (e *Env) identitiesSeen() int64 {
	seen := make([]bool, e.Trace.Config.Identities)
	var n int64
	for _, r := range e.Trace.Requests {
		if int(r.ID) >= len(seen) {
			seen = append(seen, make([]bool, int(r.ID)+1-len(seen))...)
		}
		if !seen[r.ID] {
			seen[r.ID] = true
			n++
		}
	}
	return n
}

// liveHeap is the heap in use by live objects after a full collection
// (twice, so what the first one's sweep and finalizers freed is gone).
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
