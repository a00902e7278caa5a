package hybrid

import (
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// Counts returns the view's global counts of key at now — the sum over
// every PoP of the window now falls in (cur) and the one before (prev) —
// without counting anything or creating a view entry (zeros for an unknown
// key). When the view is already a window ahead of now (gossip from a
// clock ahead rolled it), cur is the view's previous window and prev is 0:
// the window before that has left the view. The simulator compares them
// with the ground truth.
func (n *Node) Counts(key string, now time.Time) (cur, prev int64) {
	e, ok := n.lookup(key)
	if !ok {
		return 0, 0
	}
	idx, _ := n.position(n.ms(now))
	e.mu.Lock()
	defer e.mu.Unlock()
	e.roll(idx)
	c, p := e.totals()
	switch e.idx - idx {
	case 0:
		return c, p
	case 1:
		return p, 0
	}
	return 0, 0
}

// Estimate is core.SlidingEstimate over Counts at now.
func (n *Node) Estimate(key string, now time.Time) float64 {
	cur, prev := n.Counts(key, now)
	_, elapsed := n.position(n.ms(now))
	return core.SlidingEstimate(cur, prev, elapsed, n.w)
}
