package budget

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrentLifecycle: two started Limiters gossiping over NATS
// (one given NATS after Start), hammered by AllowN, Peek, Reset, Sync and
// Stats from many goroutines, some with cancelled contexts, and closed
// while the calls are in flight. The race detector judges the locking;
// every call returns a decision, ErrClosed, an error matching
// core.ErrUnavailable/ErrInvalid, or (a cancelled context) a
// *CanceledError; after Close no goroutine of the Limiters is left.
func TestConcurrentLifecycle(t *testing.T) {
	rdb, _ := redistest.Client(t)
	srv := natstest.Start(t)
	ncA, ncB := srv.Connect(t), srv.Connect(t)
	ctx := context.Background()
	require.NoError(t, rdb.Ping(ctx).Err())
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	mk := func(pop string) *Limiter {
		l, err := New(Config{PoP: pop, Limit: core.PerWindow(20, testWindow*time.Millisecond), PoPs: 2,
			SyncInterval: time.Millisecond}, rdb, clock)
		require.NoError(t, err)
		return l
	}
	a, b := mk("a"), mk("b")
	require.NoError(t, a.UseNATS(ncA))
	a.Start()
	b.Start()
	require.NoError(t, b.UseNATS(ncB), "UseNATS after Start")
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []error
	check := func(err error) {
		var gone *CanceledError
		if err == nil || errors.Is(err, ErrClosed) || errors.Is(err, core.ErrUnavailable) || errors.Is(err, core.ErrInvalid) || errors.As(err, &gone) {
			return
		}
		mu.Lock()
		bad = append(bad, err)
		mu.Unlock()
	}
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := []*Limiter{a, b}[w%2]
			for i := range 300 {
				key := fmt.Sprintf("k%d", i%5)
				c := ctx
				if i%7 == 0 {
					cc, cancel := context.WithCancel(ctx)
					cancel()
					c = cc
				}
				switch i % 10 {
				case 0:
					check(l.Reset(c, key))
				case 1:
					_, err := l.Peek(c, key, clock.Now())
					check(err)
				case 2:
					check(l.Sync(c))
				case 3:
					_ = l.Stats()
				default:
					_, err := l.AllowN(c, key, clock.Now(), int64(1+i%3))
					check(err)
				}
				if w == 0 && i%50 == 0 {
					clock.Advance(time.Second)
				}
				if w == 1 && i == 150 {
					check(a.Close(ctx))
					check(b.Close(ctx))
				}
			}
		}()
	}
	wg.Wait()
	assert.Empty(t, bad, "errors of no documented kind")
	assert.ErrorIs(t, a.Close(ctx), ErrClosed)
	limiterGoroutines := func() int {
		buf := make([]byte, 1<<22)
		return strings.Count(string(buf[:runtime.Stack(buf, true)]), "budget.(*Limiter)")
	}
	require.Eventually(t, func() bool { return limiterGoroutines() == 0 }, time.Minute, 10*time.Millisecond,
		"no goroutine of the Limiters left after Close (hang guard)")
}

// TestGossipSurvivesNATSRestart: UseNATS's subscription outlives a
// NATS restart (the clients reconnect by themselves): gossip published
// after it still denies at the other PoP without a round trip; a gossip
// published while NATS is down is no error to the Limiter.
func TestGossipSurvivesNATSRestart(t *testing.T) {
	rdb, _ := redistest.Client(t)
	srv := natstest.Start(t)
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	ctx := context.Background()
	var conns []*nats.Conn
	lim := func(pop string) *Limiter {
		l, err := New(Config{PoP: pop, Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2}, rdb, clock)
		require.NoError(t, err)
		nc := srv.Connect(t)
		conns = append(conns, nc)
		require.NoError(t, l.UseNATS(nc))
		t.Cleanup(func() { l.Close(ctx) })
		return l
	}
	a, b := lim("a"), lim("b")
	srv.Shutdown()
	require.NoError(t, a.Sync(ctx), "a Sync while NATS is down")
	srv.Restart()
	require.Eventually(t, func() bool { return conns[0].IsConnected() && conns[1].IsConnected() }, hang, 5*time.Millisecond)
	require.NoError(t, conns[1].Flush(), "b's subscription is back at the server")
	overLimitAcross(t, a, b, clock)
	calls := b.Stats().Calls
	d, err := b.Allow(ctx, "k")
	require.NoError(t, err)
	assert.False(t, d.Allowed, "b denies k on what it heard")
	assert.Equal(t, calls, b.Stats().Calls, "without a round trip")
}
