package hybrid

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// burstCallers is how many callers hit one identity at once during an
// outage in the fallback tests.
const burstCallers = 200

// scriptGate is a go-redis hook counting the script calls (EVALSHA, EVAL)
// that reached the client, so a test can wait until every caller has read
// the view and is waiting on Redis.
type scriptGate struct {
	n    atomic.Int64
	want int64
	all  chan struct{} // closed when want calls have arrived
	once sync.Once
}

func newScriptGate(want int) *scriptGate {
	return &scriptGate{want: int64(want), all: make(chan struct{})}
}

func (g *scriptGate) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (g *scriptGate) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if name := cmd.Name(); name == "evalsha" || name == "eval" {
			if g.n.Add(1) == g.want {
				g.once.Do(func() { close(g.all) })
			}
		}
		return next(ctx, cmd)
	}
}
func (g *scriptGate) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// hangingRedis is a TCP listener that accepts connections and never
// answers (a Redis that hangs); release closes it and every connection,
// so every caller waiting on it fails.
func hangingRedis(t *testing.T) (addr string, release func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err, "listen for the hanging Redis")
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	var once sync.Once
	release = func() {
		once.Do(func() {
			ln.Close()
			<-done
			mu.Lock()
			for _, c := range conns {
				c.Close()
			}
			mu.Unlock()
		})
	}
	t.Cleanup(release)
	return ln.Addr().String(), release
}

// closedPort is an address nothing listens on (a Redis that refuses).
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err, "listen to find a free port")
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// burstClient is a client for addr able to hold every burst caller on its
// own connection, no retries.
func burstClient(t *testing.T, addr string, hook goredis.Hook) *goredis.Client {
	t.Helper()
	rdb := goredis.NewClient(&goredis.Options{Addr: addr, MaxRetries: -1,
		PoolSize: burstCallers + 8, ContextTimeoutEnabled: true})
	if hook != nil {
		rdb.AddHook(hook)
	}
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// burstConfigs are the configurations the fallback bound must hold in:
// limit 10 per window, margin 0.5.
var burstConfigs = []struct {
	name string
	mod  func(*Config)
}{
	{"default", func(*Config) {}},
	{"owners", func(c *Config) { c.Owners = true }},
	{"pops3", func(c *Config) { c.PoPs = 3 }},
}

// burstNode is a Node on rdb, limit 10 per 10 s, margin 0.5, with the
// identity "k" filled locally as far as the view lets it (before any
// Redis call): it returns the Node and how many units the view holds.
func burstNode(t *testing.T, rdb *goredis.Client, mod func(*Config)) (*Node, int64) {
	t.Helper()
	cfg := Config{PoP: "burst", Limit: core.PerWindow(10, 10*time.Second), Redis: rdb,
		Clock: core.NewManualClock(t0), Margin: 0.5, Resync: -1}
	mod(&cfg)
	n, err := New(cfg)
	require.NoError(t, err, "New")
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // Redis is gone: Close's flush must not wait on it
		_ = n.Close(ctx)
	})
	for {
		d, c, err := n.Begin(context.Background(), "k", t0, 1)
		require.NoError(t, err, "local admission before the outage")
		if c != nil {
			break // the view hands the next unit to Redis: not made
		}
		require.True(t, d.Allowed, "a local decision below the margin admits")
	}
	held := int64(n.Stats().LocalDecisions)
	require.Positive(t, held, "the view holds local admissions before the outage")
	return n, held
}

// burstResult is what a burst of callers got.
type burstResult struct {
	admitted, fallbackDenied, cachedDenied int64
	other                                  []string
}

// burst runs callers concurrent AllowN(ctx, "k", t0, 1) on n, all released
// at once, and counts what they got. A decision made without Redis must
// come with an error matching core.ErrUnavailable; a denial from the view
// may come without one.
func burst(t *testing.T, n *Node, callers int) burstResult {
	t.Helper()
	var r burstResult
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			d, err := n.AllowN(context.Background(), "k", t0, 1)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && !d.Allowed && d.Source == core.SourceCachedDeny:
				r.cachedDenied++
			case err != nil && !assert.ErrorIs(t, err, core.ErrUnavailable, "a decision made without Redis reports Redis unavailable"):
				r.other = append(r.other, err.Error())
			case err != nil && d.Allowed && d.Source == core.SourceLocal:
				r.admitted++
			case err != nil && !d.Allowed && d.Source == core.SourceCachedDeny:
				r.fallbackDenied++
			default:
				r.other = append(r.other, d.Source.String())
			}
		}()
	}
	close(start)
	wg.Wait()
	return r
}

// checkBurst asserts that a burst admitted exactly what the view had left
// (the limit minus what it held): the fallback decides against the view as
// it is when it is made, each admission counted before the next caller
// looks.
func checkBurst(t *testing.T, n *Node, held int64, r burstResult, callers int) {
	t.Helper()
	left := n.Limit().Max - held
	assert.Equal(t, left, r.admitted,
		"admitted during the outage: the limit %d minus the %d the view held, whatever the %d concurrent callers", n.Limit().Max, held, callers)
	assert.Equal(t, int64(callers), r.admitted+r.fallbackDenied+r.cachedDenied,
		"every caller decided (admitted %d, fallback denials %d, cached denials %d, other %v)",
		r.admitted, r.fallbackDenied, r.cachedDenied, r.other)
	assert.Empty(t, r.other, "no decision other than a local admission or a denial from the view")
	s := n.Stats()
	assert.Equal(t, uint64(r.admitted), s.FallbackLocal, "Stats.FallbackLocal counts the fallback's admissions")
	assert.Equal(t, uint64(r.fallbackDenied), s.FallbackDenied, "Stats.FallbackDenied counts the fallback's denials")
	d, err := n.Peek(context.Background(), "k", t0)
	require.NoError(t, err, "Peek")
	assert.False(t, d.Allowed, "the view is at the limit after the burst")
}

// TestFallbackBurstHangingRedis: 200 callers of one identity, all waiting
// on a Redis that accepts connections and never answers, then failing
// together: the fallback admits only what the view had left.
func TestFallbackBurstHangingRedis(t *testing.T) {
	for _, tc := range burstConfigs {
		t.Run(tc.name, func(t *testing.T) {
			addr, release := hangingRedis(t)
			gate := newScriptGate(burstCallers)
			n, held := burstNode(t, burstClient(t, addr, gate), tc.mod)
			done := make(chan burstResult, 1)
			go func() { done <- burst(t, n, burstCallers) }()
			<-gate.all // every caller read the view and waits on Redis
			release()
			r := <-done
			assert.Equal(t, int64(burstCallers), r.admitted+r.fallbackDenied,
				"every caller waited on Redis, so every one was decided by the fallback")
			checkBurst(t, n, held, r, burstCallers)
		})
	}
}

// TestFallbackBurstRefusedRedis: 200 concurrent callers of one identity on
// a Redis that refuses connections (a closed port).
func TestFallbackBurstRefusedRedis(t *testing.T) {
	for _, tc := range burstConfigs {
		t.Run(tc.name, func(t *testing.T) {
			n, held := burstNode(t, burstClient(t, closedPort(t), nil), tc.mod)
			checkBurst(t, n, held, burst(t, n, burstCallers), burstCallers)
		})
	}
}

// TestFallbackBurstRedisKilledMidCall: 200 callers of one identity waiting
// on a real redis-server stopped with SIGSTOP, which is then killed
// (SIGKILL) while they wait.
func TestFallbackBurstRedisKilledMidCall(t *testing.T) {
	for _, tc := range burstConfigs {
		t.Run(tc.name, func(t *testing.T) {
			proc := redistest.Start(t)
			gate := newScriptGate(burstCallers)
			n, held := burstNode(t, burstClient(t, proc.Addr, gate), tc.mod)
			require.NoError(t, proc.Pause(), "SIGSTOP the redis-server")
			done := make(chan burstResult, 1)
			go func() { done <- burst(t, n, burstCallers) }()
			<-gate.all // every caller read the view and waits on the stopped server
			require.NoError(t, proc.Kill(), "SIGKILL the stopped redis-server")
			r := <-done
			assert.Equal(t, int64(burstCallers), r.admitted+r.fallbackDenied,
				"every caller waited on Redis, so every one was decided by the fallback")
			checkBurst(t, n, held, r, burstCallers)
		})
	}
}
