package hybrid

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/edgelimit/edgelimit/core"
)

// inflight counts the decisions under way, so Close can wait for those
// that began before it and flush what they count. Its zero value is not
// ready: New makes drained.
type inflight struct {
	n       atomic.Int64
	drained chan struct{} // closed once the count falls to 0 after Close began
	once    sync.Once
}

// enter counts a decision in, or returns core.ErrClosed (counting
// nothing) when Close has begun. A nil error must be paired with exit.
// Close sets the closed flag before reading the count, and enter raises
// the count before reading the flag, so either Close sees this decision
// or the decision sees Close.
func (n *Node) enter() error {
	n.busy.n.Add(1)
	if n.isClosed() {
		n.exit()
		return core.ErrClosed
	}
	return nil
}

// exit counts a decision out; the last one out after Close began wakes it.
func (n *Node) exit() {
	if n.busy.n.Add(-1) == 0 && n.isClosed() {
		n.busy.once.Do(func() { close(n.busy.drained) })
	}
}

// awaitDecisions waits, after the closed flag is set, until every decision
// that began before it has returned, or ctx ends (its error returned).
func (n *Node) awaitDecisions(ctx context.Context) error {
	if n.busy.n.Load() == 0 {
		return nil
	}
	select {
	case <-n.busy.drained:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
