package budget

import (
	"context"
	"errors"
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

// TestRedirectedBatchKeepsRedisUp: a Sync batch or a decision's report
// sent again that a Redis Cluster node redirected (*RedirectError) leaves
// the Machine up, as a configuration error must: a failure of Redis
// (*core.UnavailableError) puts it down. Driven on the Machine alone, so
// no other group's reply clears the state before it is read. Caught
// mutations: either of Finish's two failure paths (a batch, a report sent
// again) putting the Machine down on any error.
func TestRedirectedBatchKeepsRedisUp(t *testing.T) {
	redirect := &RedirectError{Op: "budget script", Err: errors.New("MOVED 1234 127.0.0.1:7001")}
	outage := &core.UnavailableError{Op: "budget script", Err: errors.New("i/o timeout")}
	for _, tc := range []struct {
		name string
		err  error
		down bool
	}{{"redirected", redirect, false}, {"unavailable", outage, true}} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMachine(t, nil)
			m.Request(w0, "k", 1)
			_, c := m.Request(w0+1, "k", 1)
			require.NotNil(t, c, "the second unit asks Redis")
			m.Complete(w0+2, c, nil, errors.New("the reply never came")) // its report goes again with the next Tick
			m.recovered(w0 + 2)
			calls := m.Tick(w0 + 100)
			redo, batch := false, false
			for _, c := range calls {
				redo, batch = redo || c.redo, batch || !c.redo
			}
			require.True(t, redo && batch, "the report sent again, and the batch")
			for _, c := range calls {
				m.Finish(c, nil, tc.err)
				assert.Equal(t, tc.down, m.Down(), "after a %s call (redo %v)", tc.name, c.redo)
				m.recovered(w0 + 100)
			}
		})
	}
}

// TestRedirectedDecisionIsNoOutage: a decision Call a Redis Cluster node
// redirected completes with the zero Decision (denied, nothing decided on
// the view) and leaves the Machine up; the same Call failing as an outage
// is decided on the view and puts it down. On the Machine alone, as the
// simulator drives it.
func TestRedirectedDecisionIsNoOutage(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		down bool
	}{
		{"redirected", &RedirectError{Op: "budget script", Err: errors.New("MOVED 1234 127.0.0.1:7001")}, false},
		{"unavailable", &core.UnavailableError{Op: "budget script", Err: errors.New("i/o timeout")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMachine(t, nil)
			m.Request(w0, "k", 1)
			_, c := m.Request(w0+1, "k", 1)
			require.NotNil(t, c, "the second unit asks Redis")
			d := m.Complete(w0+2, c, nil, tc.err)
			assert.Equal(t, tc.down, m.Down(), "%s: Redis down", tc.name)
			if tc.down {
				assert.Equal(t, SrcFallback, d.Source, "an outage: decided on the view")
			} else {
				assert.Equal(t, Decision{}, d, "a redirection: no decision")
				assert.Zero(t, m.Stats().Decisions[SrcFallback], "nothing decided on the view")
			}
		})
	}
}
