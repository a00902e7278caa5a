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
// Config.AuditRate set, Audit runs after every Sync. A zero interval takes
// its default (DefaultSyncInterval, DefaultGossipInterval: 100 ms each); a
// negative one (LoopOff) leaves that loop off, for a caller that runs Sync
// or Gossip itself. Calling Start twice, or after Close, does nothing.
//
// Recommended: the defaults, or anything from 50 ms to a tenth of the
// window. In the simulator's sync-interval sweep (docs/tradeoffs.md, limit
// 100 per 10 s, margin 0.1) 10, 50 and 100 ms gave the same accuracy, the
// shorter ones at more round trips, while 500 ms let spread attackers reach
// 1.26× the limit and 1 s 1.53×. Gossip no slower than Sync, since it
// is what tells the other PoPs between two reconciles. A PoP that dies
// without Close loses up to one sync interval of hits.
func (n *Node) Start(syncInterval, gossipInterval time.Duration) {
	n.loops.mu.Lock()
	defer n.loops.mu.Unlock()
	if n.loops.cancel != nil || n.loops.closed {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.loops.cancel = cancel
	n.every(ctx, loopInterval(syncInterval, DefaultSyncInterval), func() {
		now := n.cfg.Clock.Now()
		_ = n.Sync(ctx, now)
		_ = n.Audit(ctx, now)
	})
	n.every(ctx, loopInterval(gossipInterval, DefaultGossipInterval), func() { _ = n.Gossip(n.cfg.Clock.Now()) })
}

// loopInterval is d, or def when d is zero; negative stays negative (off).
func loopInterval(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// every runs f at each tick of a ticker of period d (n.ticker's) until
// ctx ends; a period not above 0 starts nothing.
func (n *Node) every(ctx context.Context, d time.Duration, f func()) {
	if d <= 0 {
		return
	}
	ticks, stop := n.ticker(d)
	n.loops.wg.Add(1)
	go func() {
		defer n.loops.wg.Done()
		defer stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticks:
				f()
			}
		}
	}()
}

// wallTicker is the loops' ticker: time.NewTicker's channel and Stop.
// Tests replace Node.ticker to tick by hand.
func wallTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// Close stops the loops, unsubscribes from gossip, waits for the
// decisions under way (those that began before it; bounded by ctx) and
// flushes what the Node holds: a last Gossip and a last Sync (bounded by
// ctx). From its start every decision, and Peek, returns core.ErrClosed,
// so stop serving first, then Close. A driver of the seam (Begin, Exec,
// Complete) completes its Calls before Close: a Call completed after it
// counts units no flush sends. It returns the errors, joined (ctx's when
// it ended while decisions were under way). Calling it again returns nil
// and does nothing.
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
	werr := n.awaitDecisions(ctx)
	now := n.cfg.Clock.Now()
	gerr := n.Gossip(now)
	if n.sub != nil {
		_ = n.sub.Unsubscribe()
	}
	return errors.Join(werr, gerr, n.Flush(ctx, now))
}
