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
// Redis), one batch in flight at a time, pauses between its 5 batches, 4
// times, each pause as long as the batch before it at SyncShare 0.5, and
// not at all at SyncShare 1; either way every hit reaches Redis. A Sync of
// one batch never pauses. TestSyncPacesHandfuls has several in flight.
func TestSyncPacesBatches(t *testing.T) {
	for _, share := range []float64{0.5, 1} {
		e := newEnv(t, false)
		n := e.node(fmt.Sprint("pace", share), func(c *Config) { c.BatchSize, c.SyncShare, c.SyncDepth = 4, share, 1 })
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
// the Sync with a *core.UnavailableError wrapping its error and keeps the
// unsent identities pending; the next Sync sends them.
func TestSyncPauseEndsWithContext(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("pace-ctx", func(c *Config) { c.BatchSize, c.SyncDepth = 4, 1 })
	n.sleep = func(ctx context.Context, d time.Duration) error { return context.Canceled }
	for i := 0; i < 10; i++ {
		mustAllow(t, n, fmt.Sprint("id", i), t0)
	}
	if err := n.Sync(context.Background(), t0); !errors.Is(err, context.Canceled) || !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("Sync: %v, want a *core.UnavailableError wrapping context.Canceled", err)
	}
	n.sleep = sleepCtx
	mustSync(t, n, t0)
	for i := 0; i < 10; i++ {
		if got := e.redisTotal("el", fmt.Sprint("id", i), e.idx(n)); got != 1 {
			t.Errorf("id%d holds %d in Redis after the second Sync, want 1", i, got)
		}
	}
}

// TestSyncPacesHandfuls: with SyncDepth 2, a Sync of 5 batches sends them
// as 3 pipelines (2, 2, 1) and pauses between pipelines, twice.
func TestSyncPacesHandfuls(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("pace-depth", func(c *Config) { c.BatchSize, c.SyncDepth = 4, 2 })
	var pauses int
	n.sleep = func(ctx context.Context, d time.Duration) error {
		pauses++
		return nil
	}
	for i := 0; i < 20; i++ {
		mustAllow(t, n, fmt.Sprint("id", i), t0)
	}
	var p pipelines
	e.rdb.AddHook(&p)
	mustSync(t, n, t0)
	if pauses != 2 || p.n.Load() != 3 {
		t.Fatalf("%d pauses and %d pipelines for 5 batches at depth 2, want 2 and 3", pauses, p.n.Load())
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

// TestPauseAfter: the pause after a batch that took d is d × (1 − s) / s
// (to the microsecond: float arithmetic).
func TestPauseAfter(t *testing.T) {
	for _, c := range []struct {
		share float64
		want  time.Duration
	}{{0.5, 10 * time.Millisecond}, {0.25, 30 * time.Millisecond}, {0.8, 2500 * time.Microsecond}, {1, 0}} {
		n := &Node{cfg: Config{SyncShare: c.share}}
		if got := n.pauseAfter(10 * time.Millisecond); (got - c.want).Abs() > time.Microsecond {
			t.Errorf("SyncShare %v: pause %v after 10ms, want %v", c.share, got, c.want)
		}
	}
}

// TestSleepCtx: sleepCtx waits its duration, returns at once with the
// context's error when the context ends first, and does not wait for 0.
func TestSleepCtx(t *testing.T) {
	// A lower bound in wall time: sleepCtx sleeps on the wall clock by
	// design, and a sleep never ends early (load only lengthens it).
	start := time.Now()
	if err := sleepCtx(context.Background(), 20*time.Millisecond); err != nil || time.Since(start) < 20*time.Millisecond {
		t.Fatalf("sleepCtx(20ms): %v after %v", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sleepCtx(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("sleepCtx on a cancelled context: %v", err)
	}
	if err := sleepCtx(context.Background(), 0); err != nil {
		t.Fatalf("sleepCtx(0): %v", err)
	}
}

// TestCloseFlushesWithoutPauses: Close's final Sync sends every batch
// without pausing, however small SyncShare is.
func TestCloseFlushesWithoutPauses(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("pace-close", func(c *Config) { c.BatchSize, c.SyncShare = 2, 0.01 })
	paused := false
	n.sleep = func(ctx context.Context, d time.Duration) error { paused = true; return nil }
	for i := 0; i < 9; i++ {
		mustAllow(t, n, fmt.Sprint("id", i), t0)
	}
	if err := n.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if paused {
		t.Error("Close paused between batches")
	}
	for i := 0; i < 9; i++ {
		if got := e.redisTotal("el", fmt.Sprint("id", i), e.idx(n)); got != 1 {
			t.Errorf("id%d holds %d in Redis after Close, want 1", i, got)
		}
	}
}
