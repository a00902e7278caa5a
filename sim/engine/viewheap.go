package engine

import "runtime"

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
