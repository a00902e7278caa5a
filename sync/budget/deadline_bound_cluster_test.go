package budget

import (
	"bytes"
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deadlineConn is a connection recording, once armed, every read
// deadline go-redis sets on it after writing a command other than the
// slot map's (CLUSTER SLOTS or SHARDS, which a failed call's background
// reload sends with no caller's deadline).
type deadlineConn struct {
	net.Conn
	rec     *deadlineLog
	mu      sync.Mutex
	cluster bool // the last write asked for the slot map
}

// deadlineLog holds the read deadlines set on a client's connections
// while armed.
type deadlineLog struct {
	armed atomic.Bool
	mu    sync.Mutex
	set   []time.Time
}

func (c *deadlineConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	c.cluster = bytes.Contains(bytes.ToUpper(b), []byte("CLUSTER"))
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	cluster := c.cluster
	c.mu.Unlock()
	if c.rec.armed.Load() && !t.IsZero() && !cluster {
		c.rec.mu.Lock()
		c.rec.set = append(c.rec.set, t)
		c.rec.mu.Unlock()
	}
	return c.Conn.SetReadDeadline(t)
}

// TestDeadlineBoundClusterStalled: a Limiter on a Redis Cluster client
// with ContextTimeoutEnabled whose masters are stopped (SIGSTOP), asked a
// request no free credit covers (a call at Redis), either says it is not
// DeadlineBound or sets no socket read of that decision past its context's
// deadline. go-redis' cluster client (routing policies on, its default)
// first looks up the command table (COMMAND) under a context of its own,
// 5 s detached from the caller's, until it has it cached; with
// DisableRoutingPolicies it makes no such lookup. The proof is the
// deadlines go-redis sets on its sockets, not the time the call takes.
// Mutation caught: DeadlineBound true for any cluster client with
// ContextTimeoutEnabled.
func TestDeadlineBoundClusterStalled(t *testing.T) {
	_, cl := redistest.Cluster(t)
	for _, disable := range []bool{false, true} {
		rec := &deadlineLog{}
		opts := cl.Options()
		opts.ContextTimeoutEnabled, opts.DisableRoutingPolicies = true, disable
		opts.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &deadlineConn{Conn: c, rec: rec}, nil
		}
		cc := redis.NewClusterClient(opts)
		// the slot map loaded, the command table not (ForEachMaster's
		// calls go to the masters' own clients)
		require.NoError(t, cc.ForEachMaster(context.Background(), func(ctx context.Context, m *redis.Client) error {
			return m.Ping(ctx).Err()
		}))
		l, err := New(Config{PoP: "p", Limit: core.PerWindow(10, time.Minute), PoPs: 1, FreeCredit: -1}, cc, nil)
		require.NoError(t, err)
		for i := range cl.Masters() {
			require.NoError(t, cl.Node(i).Pause())
		}
		rec.armed.Store(true)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		dl, _ := ctx.Deadline()
		done := make(chan error, 1)
		go func() {
			_, err := l.Allow(ctx, "user:1")
			done <- err
		}()
		select {
		case err = <-done:
		case <-time.After(time.Minute): // a hang guard, not a bound
			t.Fatal("the decision never returned")
		}
		cancel()
		rec.armed.Store(false)
		for i := range cl.Masters() {
			require.NoError(t, cl.Node(i).Resume())
		}
		require.Error(t, err, "a stopped cluster answers nothing")
		if l.DeadlineBound() {
			rec.mu.Lock()
			for _, s := range rec.set {
				assert.False(t, s.After(dl), "DisableRoutingPolicies %v: a socket read set %v past the decision's deadline", disable, s.Sub(dl))
			}
			rec.mu.Unlock()
		}
		assert.Equal(t, disable, l.DeadlineBound(), "DisableRoutingPolicies %v", disable)
		require.NoError(t, l.Close(context.Background()))
		require.NoError(t, cc.Close())
	}
}
