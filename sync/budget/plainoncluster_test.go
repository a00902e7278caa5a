package budget

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlainClientOnClusterNode: a budget Limiter (16 groups, the view's
// fallback on) on a plain *redis.Client pointed at one master of a real
// three-master cluster. An identity whose group's hash tag that master
// serves is decided at Redis as usual; one whose group another master
// serves is redirected (MOVED), which is a configuration error and no
// outage: AllowN, Peek and Reset return an error matching core.ErrInvalid
// and ErrNotClusterClient, not core.ErrUnavailable (a *RedirectError
// wrapping the MOVED reply), with no decision (denied, not the view's
// fallback admission); a Sync whose batches of those groups are redirected
// returns such an error; none of it puts the Limiter down, so the
// identity of the client's own node is still decided at Redis after them;
// and no other master holds a key.
func TestPlainClientOnClusterNode(t *testing.T) {
	cc, cl := redistest.Cluster(t)
	ctx := context.Background()
	cfg := Config{PoP: "p", Incarnation: 1, Limit: core.PerWindow(5, time.Minute), PoPs: 2, Groups: 16}
	probe, err := NewMachine(cfg)
	require.NoError(t, err)
	masterOf := func(key string) int {
		m, err := cl.MasterOf(probe.tag(probe.group(probe.bucket(key))))
		require.NoError(t, err)
		return m
	}
	master := masterOf("user:0")
	var home, away string
	for i := 0; home == "" || away == ""; i++ {
		id := fmt.Sprint("user:", i)
		switch m := masterOf(id); {
		case m == master && home == "":
			home = id
		case m != master && away == "":
			away = id
		}
	}
	plain := redis.NewClient(&redis.Options{Addr: cl.Node(master).Addr})
	t.Cleanup(func() { plain.Close() })
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	l, err := New(cfg, plain, clock)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close(context.Background()) })

	decided := func(what string) {
		t.Helper()
		d, err := l.Allow(ctx, home)
		require.NoError(t, err, "%s: an identity of the client's own node", what)
		assert.Equal(t, core.SourceRedis, d.Source, "%s: an identity of the client's own node, decided at Redis: %+v", what, d)
		assert.True(t, d.Allowed, "%s: an identity of the client's own node: %+v", what, d)
	}
	misrouted := func(what string, d core.Decision, err error) {
		t.Helper()
		require.Error(t, err, "%s of an identity of another node", what)
		assert.ErrorIs(t, err, core.ErrInvalid, "%s: a configuration error", what)
		assert.ErrorIs(t, err, ErrNotClusterClient, "%s: a configuration error", what)
		var re *RedirectError
		if assert.ErrorAs(t, err, &re, "%s", what) {
			_, moved := redis.IsMovedError(re.Err)
			assert.True(t, moved, "%s: wraps the MOVED reply, got %v", what, re.Err)
		}
		assert.Contains(t, err.Error(), "ClusterClient", "%s: the message names the fix", what)
		assert.NotErrorIs(t, err, core.ErrUnavailable, "%s: no outage", what)
		assert.Equal(t, core.Decision{}, d, "%s: no decision (denied), not the view's fallback", what)
		assert.False(t, l.Stats().Decisions[SrcFallback] > 0, "%s: nothing decided on the view", what)
		l.mu.Lock()
		down := l.m.Down()
		l.mu.Unlock()
		assert.False(t, down, "%s: Redis is not down", what)
	}

	decided("first")
	d, err := l.Allow(ctx, away)
	misrouted("AllowN", d, err)
	decided("after AllowN's redirection")
	d, err = l.Peek(ctx, away, clock.Now())
	misrouted("Peek", d, err)
	misrouted("Reset", core.Decision{}, l.Reset(ctx, away))
	misrouted("Sync", core.Decision{}, l.Sync(ctx))
	decided("after Sync's redirections")
	for i := range cl.Masters() {
		if i == master {
			continue
		}
		node := redis.NewClient(&redis.Options{Addr: cl.Node(i).Addr})
		n, err := node.DBSize(ctx).Result()
		node.Close()
		require.NoError(t, err)
		assert.Zero(t, n, "keys on master %d, which the client never reached", i)
	}
	assert.Positive(t, redistest.ClusterDBSize(t, cc), "the client's own node holds its identity's state")
}
