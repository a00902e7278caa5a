package hybrid

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
)

// TestSyncPacesBatches: a Sync of 20 identities in batches of 4 (one
// Redis) pauses between its 5 batches, 4 times, each pause as long as the
// batch before it at SyncShare 0.5, and not at all at SyncShare 1; either
// way every hit reaches Redis. A Sync of one batch never pauses.
func TestSyncPacesBatches(t *testing.T) {
	for _, share := range []float64{0.5, 1} {
		e := newEnv(t, false)
		n := e.node(fmt.Sprint("pace", share), func(c *Config) { c.BatchSize, c.SyncShare = 4, share })
		var pauses []time.Duration
		n.sleep = func(ctx context.Context, d time.Duration) error {
			pauses = append(pauses, d)
			return nil
		}
		for i := 0; i < 20; i++ {
			mustAllow(t, n, fmt.Sprint("id", i), t0)
		}
		mustSync(t, n, t0)
		if len(pauses) != 4 {
			t.Fatalf("SyncShare %v: %d pauses for 5 batches, want 4", share, len(pauses))
		}
		for i, p := range pauses {
			if (share < 1) != (p > 0) {
				t.Errorf("SyncShare %v: pause %d is %v", share, i, p)
			}
		}
		for i := 0; i < 20; i++ {
			if got := e.redisTotal("el", fmt.Sprint("id", i), e.idx(n)); got != 1 {
				t.Errorf("SyncShare %v: id%d holds %d in Redis, want 1", share, i, got)
			}
		}
		pauses = nil
		mustAllow(t, n, "id0", t0)
		mustSync(t, n, t0)
		if len(pauses) != 0 {
			t.Errorf("SyncShare %v: a one-batch Sync paused %v", share, pauses)
		}
	}
}

// TestSyncPauseEndsWithContext: a context that ends during a pause stops
// the Sync with its error and keeps the unsent identities pending; the
// next Sync sends them.
func TestSyncPauseEndsWithContext(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("pace-ctx", func(c *Config) { c.BatchSize = 4 })
	n.sleep = func(ctx context.Context, d time.Duration) error { return context.Canceled }
	for i := 0; i < 10; i++ {
		mustAllow(t, n, fmt.Sprint("id", i), t0)
	}
	if err := n.Sync(context.Background(), t0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sync: %v, want context.Canceled", err)
	}
	n.sleep = sleepCtx
	mustSync(t, n, t0)
	for i := 0; i < 10; i++ {
		if got := e.redisTotal("el", fmt.Sprint("id", i), e.idx(n)); got != 1 {
			t.Errorf("id%d holds %d in Redis after the second Sync, want 1", i, got)
		}
	}
}

// TestSyncShareValidated: SyncShare outside [0, 1] is refused with
// ErrBadConfig (matching core.ErrInvalid).
func TestSyncShareValidated(t *testing.T) {
	rdb, _ := redistest.Client(t)
	for _, s := range []float64{-0.1, 1.5} {
		_, err := New(Config{PoP: "p", Limit: core.PerWindow(10, time.Second), Redis: rdb, SyncShare: s})
		if !errors.Is(err, ErrBadConfig) || !errors.Is(err, core.ErrInvalid) {
			t.Errorf("SyncShare %v: %v, want ErrBadConfig", s, err)
		}
	}
}
