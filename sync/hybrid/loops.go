package hybrid

import (
	"context"
	"errors"
	"sync"
	"time"
)

// loops are the background tickers started by Start.
type loops struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed bool
}

// Start runs Sync every syncInterval and Gossip every gossipInterval in
// background goroutines, with the Node's Clock, until Close; with
// Config.AuditRate set, Audit runs after every Sync. A non-positive
// interval leaves that loop off. Calling Start twice, or after Close, does
// nothing.
func (n *Node) Start(syncInterval, gossipInterval time.Duration) {
	n.loops.mu.Lock()
	defer n.loops.mu.Unlock()
	if n.loops.cancel != nil || n.loops.closed {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.loops.cancel = cancel
	n.every(ctx, syncInterval, func() {
		now := n.cfg.Clock.Now()
		_ = n.Sync(ctx, now)
		_ = n.Audit(ctx, now)
	})
	n.every(ctx, gossipInterval, func() { _ = n.Gossip(n.cfg.Clock.Now()) })
}

func (n *Node) every(ctx context.Context, d time.Duration, f func()) {
	if d <= 0 {
		return
	}
	n.loops.wg.Add(1)
	go func() {
		defer n.loops.wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				f()
			}
		}
	}()
}

// Close stops the loops, unsubscribes from gossip, and flushes what the
// Node holds: a last Gossip and a last Sync (bounded by ctx). It returns
// their errors, joined. Calling it again returns nil and does nothing.
func (n *Node) Close(ctx context.Context) error {
	n.loops.mu.Lock()
	if n.loops.closed {
		n.loops.mu.Unlock()
		return nil
	}
	n.loops.closed = true
	n.closed.Store(true) // from now on every decision returns core.ErrClosed
	cancel := n.loops.cancel
	n.loops.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	n.loops.wg.Wait()
	now := n.cfg.Clock.Now()
	gerr := n.Gossip(now)
	if n.sub != nil {
		_ = n.sub.Unsubscribe()
	}
	return errors.Join(gerr, n.sync(ctx, now, false)) // no pauses: a shutdown deadline must not expire in one
}
