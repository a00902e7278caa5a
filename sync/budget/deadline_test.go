package budget

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeadlineBound: a Limiter is DeadlineBound exactly when its go-redis
// client has ContextTimeoutEnabled, a cluster client DisableRoutingPolicies
// too (see TestDeadlineBoundClusterStalled; a plain client, a cluster
// client and a Ring of each kind, and a type of the user's embedding one). Caught
// mutation: telling the client by its concrete type (a wrapper never
// bound).
func TestDeadlineBound(t *testing.T) {
	_, p := redistest.Client(t)
	for _, c := range []struct {
		name  string
		rdb   redis.UniversalClient
		bound bool
	}{
		{"client", redis.NewClient(&redis.Options{Addr: p.Addr}), false},
		{"client, ContextTimeoutEnabled", redis.NewClient(&redis.Options{Addr: p.Addr, ContextTimeoutEnabled: true}), true},
		{"cluster client", redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{p.Addr}}), false},
		{"cluster client, ContextTimeoutEnabled", redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{p.Addr}, ContextTimeoutEnabled: true}), false},
		{"cluster client, ContextTimeoutEnabled, DisableRoutingPolicies", redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{p.Addr}, ContextTimeoutEnabled: true, DisableRoutingPolicies: true}), true},
		{"wrapped client, ContextTimeoutEnabled", struct{ *redis.Client }{redis.NewClient(&redis.Options{Addr: p.Addr, ContextTimeoutEnabled: true})}, true},
		{"wrapped cluster client", tracedCluster{redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{p.Addr}})}, false},
		{"wrapped cluster client, ContextTimeoutEnabled", tracedCluster{redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{p.Addr}, ContextTimeoutEnabled: true})}, false},
		{"wrapped cluster client, ContextTimeoutEnabled, DisableRoutingPolicies", tracedCluster{redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{p.Addr}, ContextTimeoutEnabled: true, DisableRoutingPolicies: true})}, true},
		{"ring, ContextTimeoutEnabled", redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": p.Addr}, ContextTimeoutEnabled: true}), true},
		{"wrapped ring, ContextTimeoutEnabled", struct{ *redis.Ring }{redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": p.Addr}, ContextTimeoutEnabled: true})}, true},
	} {
		t.Cleanup(func() { c.rdb.Close() })
		l, err := New(Config{PoP: "p", Limit: core.PerWindow(10, time.Minute), PoPs: 1}, c.rdb, nil)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.bound, l.DeadlineBound(), c.name)
	}
}

// TestDeadlineBoundCallEndsAtDeadline: on a redis-server whose clients are
// paused (CLIENT PAUSE ALL), a DeadlineBound Limiter's decision that needs
// Redis returns when its context's deadline passes, with the view's
// decision and an error wrapping core.ErrUnavailable and a network
// timeout (go-redis sets the context's deadline on the connection), long
// before the server resumes; the client has no timeout of its own.
func TestDeadlineBoundCallEndsAtDeadline(t *testing.T) {
	admin, p := redistest.Client(t)
	// No read or write timeout of its own (-1): only the context's
	// deadline, which ContextTimeoutEnabled sets on the connection, can
	// end a call the paused server never answers.
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr, ContextTimeoutEnabled: true, MaxRetries: -1,
		ReadTimeout: -1, WriteTimeout: -1})
	t.Cleanup(func() { rdb.Close() })
	clk := core.NewManualClock(time.UnixMilli(1_800_000_000_500))
	l, err := New(Config{PoP: "p", Limit: core.PerWindow(10, time.Minute), PoPs: 1}, rdb, clk)
	require.NoError(t, err)
	require.True(t, l.DeadlineBound())
	ctx := context.Background()
	d, err := l.AllowN(ctx, "k", clk.Now(), 1)
	require.NoError(t, err)
	require.True(t, d.Allowed, "the free unit")
	calls := l.Stats().Calls
	// Pause every client for ten minutes: only the context can end the call.
	require.NoError(t, admin.Do(ctx, "CLIENT", "PAUSE", 600_000, "ALL").Err())
	done := make(chan error, 1)
	go func() {
		dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, err := l.AllowN(dctx, "k", clk.Now(), 1)
		done <- err
	}()
	var got error
	require.Eventually(t, func() bool {
		select {
		case got = <-done:
			return true
		default:
			return false
		}
	}, time.Minute, 10*time.Millisecond, "the decision returned before the pause ended")
	assert.ErrorIs(t, got, core.ErrUnavailable)
	var ne net.Error
	if assert.ErrorAs(t, got, &ne, "a network error") {
		assert.True(t, ne.Timeout(), "the connection's deadline (the context's) passed: %v", got)
	}
	assert.Equal(t, calls+1, l.Stats().Calls, "the decision sent its call to Redis")
}
