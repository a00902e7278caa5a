package hybrid

import (
	"sync"
	"sync/atomic"
)

// downSet records, per Redis node, until when (ms) Redis-decided requests
// skip it after a failure. A node is named as reconcile.Store.Shard names
// it: its address on a Redis Cluster, "" for a single Redis. One dead
// master thus sends to the fallback only the identities it serves; the
// others keep deciding at their own masters. Its zero value is empty and
// ready.
type downSet struct {
	n     atomic.Int64 // nodes in until; 0 lets isDown and clear skip the lock
	mu    sync.Mutex
	until map[string]int64
}

// mark records node down until ms, or until a later time it already had
// (a failure detected late must not shorten a newer mark).
func (d *downSet) mark(node string, until int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.until == nil {
		d.until = map[string]int64{}
	}
	d.until[node] = max(d.until[node], until)
	d.n.Store(int64(len(d.until)))
}

// clear forgets node's failure: it answered.
func (d *downSet) clear(node string) {
	if d.n.Load() == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.until, node)
	d.n.Store(int64(len(d.until)))
}

// count is how many nodes are marked down at now (ms), expired marks
// dropped.
func (d *downSet) count(now int64) int {
	if d.n.Load() == 0 {
		return 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.expire(now)
	return len(d.until)
}

// expire drops the marks that ran out by now (ms). Called with mu held.
func (d *downSet) expire(now int64) {
	for k, u := range d.until {
		if u <= now {
			delete(d.until, k)
		}
	}
	d.n.Store(int64(len(d.until)))
}

// isDown reports whether node is marked down at now (ms). Marks that have
// expired are dropped on the way, so a node that never answers again (a
// dead master whose replica took over under another address) does not keep
// the set non-empty.
func (d *downSet) isDown(node string, now int64) bool {
	if d.n.Load() == 0 {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.expire(now)
	return now < d.until[node]
}
