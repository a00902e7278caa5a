package hybrid

import (
	"context"
	"time"
)

// DefaultSyncShare is Config.SyncShare when left zero.
const DefaultSyncShare = 0.5

// pauseAfter is how long Sync waits, after a batch to one Redis node that
// took d (its round trip, mostly the script's run time in Redis' single
// thread), before the next batch to that node: d × (1 − SyncShare) /
// SyncShare, so a long Sync keeps a node busy at most SyncShare of the time.
// 0 when SyncShare is 1.
func (n *Node) pauseAfter(d time.Duration) time.Duration {
	s := n.cfg.SyncShare
	if s >= 1 {
		return 0
	}
	return time.Duration(float64(d) * (1 - s) / s)
}

// sleepCtx waits d or until ctx ends, returning ctx's error then.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
