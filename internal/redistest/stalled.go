package redistest

import (
	"bytes"
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// StalledDecider is what DeadlineOnStalledCluster asks of a limiter built
// on its cluster client: one decision on ctx (its error), whether the
// limiter says it is DeadlineBound, and its Close (nil: none).
type StalledDecider struct {
	Decide        func(ctx context.Context) error
	DeadlineBound func() bool
	Close         func()
}

// DeadlineOnStalledCluster checks a limiter's DeadlineBound on a real
// three-master Redis Cluster whose masters are stopped (SIGSTOP): for a
// cluster client with ContextTimeoutEnabled, with go-redis' routing
// policies on (its default) and off (DisableRoutingPolicies), build makes
// the limiter, which then decides once under a 50 ms deadline. A limiter
// that says it is DeadlineBound must set no socket read of that decision
// past the deadline (the deadlines go-redis sets on its connections are
// the proof, not the time the call takes; only reads after a decision's
// own commands count: deadlineConn), and it must say so exactly when routing
// policies are off: with them on, go-redis looks its command table up
// (COMMAND) before a call until it has it cached, under a context of its
// own, 5 s long and detached from the caller's.
func DeadlineOnStalledCluster(t *testing.T, build func(t *testing.T, cc *redis.ClusterClient) StalledDecider) {
	t.Helper()
	_, cl := Cluster(t)
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
		d := build(t, cc)
		for i := range cl.Masters() {
			require.NoError(t, cl.Node(i).Pause())
		}
		rec.armed.Store(true)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		dl, _ := ctx.Deadline()
		done := make(chan error, 1)
		go func() { done <- d.Decide(ctx) }()
		var err error
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
		if d.DeadlineBound() {
			rec.mu.Lock()
			for _, s := range rec.set {
				assert.False(t, s.After(dl), "DisableRoutingPolicies %v: a socket read set %v past the decision's deadline", disable, s.Sub(dl))
			}
			rec.mu.Unlock()
		}
		assert.Equal(t, disable, d.DeadlineBound(), "DisableRoutingPolicies %v", disable)
		if d.Close != nil {
			d.Close()
		}
		require.NoError(t, cc.Close())
	}
}

// deadlineConn is a connection recording, once armed, every read
// deadline go-redis sets on it after writing a command a decision sends
// (its script, or the command table go-redis looks up before it: see
// decisionCommands). Other reads may outlive the caller without holding
// it: the slot map a failed call's background reload asks (CLUSTER), a
// connection's handshake (HELLO, CLIENT), which go-redis runs detached
// from the caller when it dials, each with no caller's deadline.
type deadlineConn struct {
	net.Conn
	rec      *deadlineLog
	mu       sync.Mutex
	decision bool // the last write was a decision's command
}

// decisionCommands are the commands a decision of the limiters under test
// sends: their scripts, and COMMAND, go-redis' command-table lookup.
var decisionCommands = map[string]bool{"EVALSHA": true, "EVAL": true, "EVALSHA_RO": true, "EVAL_RO": true, "COMMAND": true}

// firstCommand is the name of the first command in b, a write of RESP
// arrays ("*2\r\n$7\r\nCOMMAND\r\n..."), upper-cased; "" when b is none.
func firstCommand(b []byte) string {
	f := bytes.SplitN(b, []byte("\r\n"), 4)
	if len(f) < 3 || len(f[0]) == 0 || f[0][0] != '*' {
		return ""
	}
	return string(bytes.ToUpper(f[2]))
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
	c.decision = decisionCommands[firstCommand(b)]
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	decision := c.decision
	c.mu.Unlock()
	if c.rec.armed.Load() && !t.IsZero() && decision {
		c.rec.mu.Lock()
		c.rec.set = append(c.rec.set, t)
		c.rec.mu.Unlock()
	}
	return c.Conn.SetReadDeadline(t)
}
