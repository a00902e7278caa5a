package budget

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// panicHook is a go-redis hook that panics on the budget script's calls
// while on is set.
type panicHook struct{ on *atomic.Bool }

func (h panicHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h panicHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.on.Load() && (cmd.Name() == "evalsha" || cmd.Name() == "eval") {
			panic("hook panicked")
		}
		return next(ctx, cmd)
	}
}

func (h panicHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestPanickingCallCompleted: a decision Call whose Exec panics (here a
// Redis client's hook) is completed before the panic goes on to AllowN's
// caller: the identity has no Call in flight afterwards, and its next
// request, Redis healthy, is sent and admitted. Caught mutations: no
// completion (the identity kept a Call in flight for good, which denies a
// flooding identity here for good: the first assertion after the panic
// fails), and a panic recovered and not passed on (the first).
func TestPanickingCallCompleted(t *testing.T) {
	_, p := redistest.Client(t)
	var on atomic.Bool
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr})
	rdb.AddHook(panicHook{&on})
	t.Cleanup(func() { rdb.Close() })
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	l, err := New(Config{PoP: "a", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2, FreeCredit: -1}, rdb, clock)
	require.NoError(t, err)
	ctx := context.Background()
	t.Cleanup(func() { _ = l.Close(ctx) })

	on.Store(true)
	require.PanicsWithValue(t, "hook panicked", func() { _, _ = l.Allow(ctx, "k") }, "the hook's panic reaches the caller")
	l.mu.Lock()
	e := l.m.view["k"]
	require.NotNil(t, e, "the request made a full entry")
	asking, down := e.asking, l.m.Down()
	l.mu.Unlock()
	assert.Zero(t, asking, "the Call that panicked is completed: none in flight")
	assert.False(t, down, "a panic is no outage")

	on.Store(false)
	calls := l.Stats().Calls
	d, err := l.Allow(ctx, "k")
	require.NoError(t, err)
	assert.True(t, d.Allowed, "the next request is admitted")
	assert.Equal(t, core.SourceRedis, d.Source, "decided at Redis")
	assert.Equal(t, calls+1, l.Stats().Calls, "one Call sent for it")
}
