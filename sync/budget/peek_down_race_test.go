package budget

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestPeekNWhileDownRace: Peeks answered while the Limiter is down run
// alongside failing Syncs; under the race detector no read of the
// Machine's state happens outside the Limiter's lock. Mutation it
// catches: Machine.Down read after PeekN let the lock go.
func TestPeekNWhileDownRace(t *testing.T) {
	_, p := redistest.Client(t)
	ctx := context.Background()
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	l, err := New(Config{PoP: "a", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2, FreeCredit: -1}, rdb, clock)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close(ctx) })
	require.NoError(t, p.Kill())
	_, err = l.Peek(ctx, "k", clock.Now())
	require.ErrorIs(t, err, core.ErrUnavailable)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 3; i++ {
			_ = l.Sync(ctx)
		}
	}()
	for i := 0; i < 200; i++ {
		_, err := l.Peek(ctx, "k", clock.Now())
		require.ErrorIs(t, err, core.ErrUnavailable)
	}
	wg.Wait()
}
