package hybrid

import (
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// Counts returns the view's global counts of key at now — the sum over
// every PoP of the current and the previous window — without counting
// anything or creating a view entry (zeros for an unknown key). The
// simulator compares them with the ground truth.
func (n *Node) Counts(key string, now time.Time) (cur, prev int64) {
	e, ok := n.lookup(key)
	if !ok {
		return 0, 0
	}
	idx, _ := n.position(core.Millis(now))
	e.mu.Lock()
	defer e.mu.Unlock()
	e.roll(idx)
	return e.totals()
}

// Estimate is core.SlidingEstimate over Counts at now.
func (n *Node) Estimate(key string, now time.Time) float64 {
	cur, prev := n.Counts(key, now)
	_, elapsed := n.position(core.Millis(now))
	return core.SlidingEstimate(cur, prev, elapsed, n.w)
}
