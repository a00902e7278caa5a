package hybrid

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/edgelimit/edgelimit/core"
)

// inflight counts the decisions under way, so Close can wait for those
// that began before it and flush what they count. The count is spread
// over slots, each on its own cache lines, a decision taking a random one,
// so concurrent decisions rarely write the same line. Its zero value is not
// ready: newInflight makes it.
type inflight struct {
	slots   []inflightSlot
	mask    uint32
	drained chan struct{} // closed once the count falls to 0 after Close began
	once    sync.Once
}

// inflightSlot is one slot of the count, padded to two cache lines.
type inflightSlot struct {
	n atomic.Int64
	_ [120]byte
}

// newInflight returns a count with a power of two of slots, at least 8 and
// at least twice GOMAXPROCS.
func newInflight() inflight {
	k := 8
	for k < 2*runtime.GOMAXPROCS(0) {
		k *= 2
	}
	return inflight{slots: make([]inflightSlot, k), mask: uint32(k - 1), drained: make(chan struct{})}
}

// total is the sum of the slots.
func (f *inflight) total() int64 {
	var s int64
	for i := range f.slots {
		s += f.slots[i].n.Load()
	}
	return s
}

// enter counts a decision in and returns its slot for exit, or returns
// core.ErrClosed (counting nothing) when Close has begun. A nil error must
// be paired with exit. Close sets the closed flag before reading the
// count, and enter raises the count before reading the flag, so either
// Close sees this decision or the decision sees Close.
func (n *Node) enter() (uint32, error) {
	slot := rand.Uint32() & n.busy.mask
	n.busy.slots[slot].n.Add(1)
	if n.isClosed() {
		n.exit(slot)
		return 0, core.ErrClosed
	}
	return slot, nil
}

// exit counts a decision out of slot; the last one out after Close began
// wakes it. Each exit lowers its slot before reading the others, so the
// last of the decisions under way sees them all at 0.
func (n *Node) exit(slot uint32) {
	if n.busy.slots[slot].n.Add(-1) == 0 && n.isClosed() && n.busy.total() == 0 {
		n.busy.once.Do(func() { close(n.busy.drained) })
	}
}

// awaitDecisions waits, after the closed flag is set, until every decision
// that began before it has returned, or ctx ends (its error returned).
func (n *Node) awaitDecisions(ctx context.Context) error {
	if n.busy.total() == 0 {
		return nil
	}
	select {
	case <-n.busy.drained:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
