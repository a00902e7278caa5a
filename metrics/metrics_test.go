package metrics_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

var epoch = time.Unix(1_700_000_010, 0)

// down is a limiter whose store is unreachable; it fails closed.
type down struct{ core.Limiter }

func (down) AllowN(context.Context, string, time.Time, int64) (core.Decision, error) {
	return core.Decision{Source: core.SourceFailClosed}, &core.UnavailableError{Op: "test", Err: errors.New("refused")}
}

// invalid is a limiter that refuses every input.
type invalid struct{ core.Limiter }

func (invalid) AllowN(context.Context, string, time.Time, int64) (core.Decision, error) {
	return core.Decision{}, core.ErrEmptyKey
}

func newLocal(t *testing.T, max int64) core.Limiter {
	t.Helper()
	l, err := local.New(core.PerWindow(max, time.Minute))
	require.NoError(t, err)
	return l
}

// register puts c in a pedantic registry, which also checks that every
// metric collected matches a described descriptor.
func register(t *testing.T, c *metrics.Collector) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	err := reg.Register(c)
	require.NoError(t, err, "register")
	return reg
}

func TestDecisionCountsOfAKnownRun(t *testing.T) {
	c := metrics.New()
	reg := register(t, c)
	ctx := context.Background()
	l := c.Wrap("api", newLocal(t, 3))
	for i := 0; i < 5; i++ { // 3 allowed, 2 denied
		_, err := l.AllowN(ctx, "k", epoch, 1)
		require.NoError(t, err)
	}
	// not counted
	_, err := l.Peek(ctx, "k", epoch)
	require.NoError(t, err)
	_, _ = c.Wrap("store", down{l}).AllowN(ctx, "k", epoch, 1)
	_, _ = c.Wrap("store", invalid{l}).AllowN(ctx, "k", epoch, 1)
	wantCounters(t, reg, "edgelimit_decisions_total", map[string]float64{
		"api/allowed/local":        3,
		"api/denied/local":         2,
		"store/denied/fail-closed": 1, // the decision returned with the error
	})
	wantCounters(t, reg, "edgelimit_decision_errors_total", map[string]float64{
		"store/unavailable": 1,
		"store/invalid":     1,
	})
	n := histogramCount(t, reg, "edgelimit_decision_duration_seconds", "api")
	require.Equal(t, uint64(5), n, "latency histogram of api holds %d samples, want 5", n)
}

func TestRedisRoundTripsOfAKnownRun(t *testing.T) {
	proc := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: proc.Addr, MaxRetries: -1, PoolSize: 1})
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	// Set up both connections (commands, pipelines) before counting: a new
	// connection's HELLO and CLIENT SETINFO are round trips too.
	require.NoError(t, rdb.Ping(ctx).Err())
	_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error { p.Ping(ctx); return nil })
	c := metrics.New()
	reg := register(t, c)
	rdb.AddHook(c.RedisHook("main"))

	rdb.Set(ctx, "a", "1", 0)                                    // command
	rdb.Get(ctx, "missing")                                      // command, redis.Nil: no error
	rdb.EvalSha(ctx, strings.Repeat("0", 40), nil)               // command, NOSCRIPT: counted apart
	rdb.LPush(ctx, "a", "x")                                     // command, WRONGTYPE: reply error
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error { // one pipeline of 4
		for i := 0; i < 4; i++ {
			p.Incr(ctx, "n")
		}
		return nil
	})
	require.NoError(t, err)
	err = proc.Kill()
	require.NoError(t, err)
	// command, transport error
	require.Error(t, rdb.Get(ctx, "a").Err(), "GET succeeded on a killed server")
	want := `
# HELP edgelimit_redis_errors_total Failed Redis round trips: type=reply for an error reply, type=transport for no answer, type=noscript for a script Redis had not cached (the caller then sends it), type=canceled for a caller that left.
# TYPE edgelimit_redis_errors_total counter
edgelimit_redis_errors_total{client="main",type="noscript"} 1
edgelimit_redis_errors_total{client="main",type="reply"} 1
edgelimit_redis_errors_total{client="main",type="transport"} 1
# HELP edgelimit_redis_roundtrips_total Redis round trips: one per command (kind=command) or pipeline (kind=pipeline).
# TYPE edgelimit_redis_roundtrips_total counter
edgelimit_redis_roundtrips_total{client="main",kind="command"} 5
edgelimit_redis_roundtrips_total{client="main",kind="pipeline"} 1
`
	err = testutil.GatherAndCompare(reg, strings.NewReader(want),
		"edgelimit_redis_roundtrips_total", "edgelimit_redis_errors_total")
	require.NoError(t, err)
	n := histogramSum(t, reg, "edgelimit_redis_pipeline_commands", "main")
	require.Equal(t, float64(4), n, "pipeline size histogram sums %v commands, want 4", n)
}

func TestNodeStats(t *testing.T) {
	c := metrics.New(metrics.WithNamespace("x"), metrics.WithConstLabels(prometheus.Labels{"pop": "fra1"}))
	reg := register(t, c)
	sent := 0.0
	c.AddStats("n1", func() map[string]float64 {
		sent += 10
		return map[string]float64{"gossip_sent": sent, "pending": 3}
	})
	c.AddStats("gone", func() map[string]float64 { return map[string]float64{"x": 1} })
	c.AddStats("gone", nil)
	_ = testutil.CollectAndCount(c) // one scrape
	want := `
# HELP x_node_stat A limiter node's own statistic (see AddStats), read at scrape time.
# TYPE x_node_stat gauge
x_node_stat{node="n1",pop="fra1",stat="gossip_sent"} 20
x_node_stat{node="n1",pop="fra1",stat="pending"} 3
`
	err := testutil.GatherAndCompare(reg, strings.NewReader(want), "x_node_stat")
	require.NoError(t, err)
}

func TestWrapForwardsEverything(t *testing.T) {
	c := metrics.New()
	inner := newLocal(t, 2)
	l := c.Wrap("api", inner)
	ctx := context.Background()
	require.Equal(t, inner.Limit(), l.Limit(), "Limit() = %v", l.Limit())
	d, _ := l.Allow(ctx, "k")
	require.True(t, d.Allowed, "Allow = %+v", d)
	require.Equal(t, int64(1), d.Remaining, "Allow = %+v", d)
	err := l.Reset(ctx, "k")
	require.NoError(t, err)
	d, _ = l.Peek(ctx, "k", time.Now())
	require.Equal(t, int64(2), d.Remaining, "after Reset, Peek = %+v", d)
	_, err = l.AllowN(ctx, "", epoch, 1)
	require.ErrorIs(t, err, core.ErrInvalid, "bad key: err = %v", err)
}

// TestNodeLabelDropped: WithNodeLabel("") exports a node's statistics
// without the node label, so a PoP already named by a const label is not
// named twice; WithNodeLabel("pop_node") renames it.
func TestNodeLabelDropped(t *testing.T) {
	c := metrics.New(metrics.WithConstLabels(prometheus.Labels{"pop": "fra1"}), metrics.WithNodeLabel(""))
	reg := register(t, c)
	c.AddStats("fra1", func() map[string]float64 { return map[string]float64{"pending": 3} })
	want := `
# HELP edgelimit_node_stat A limiter node's own statistic (see AddStats), read at scrape time.
# TYPE edgelimit_node_stat gauge
edgelimit_node_stat{pop="fra1",stat="pending"} 3
`
	err := testutil.GatherAndCompare(reg, strings.NewReader(want), "edgelimit_node_stat")
	require.NoError(t, err)
	c = metrics.New(metrics.WithNodeLabel("pop_node"))
	reg = register(t, c)
	c.AddStats("fra1", func() map[string]float64 { return map[string]float64{"pending": 3} })
	want = strings.Replace(want, `pop="fra1"`, `pop_node="fra1"`, 1)
	err = testutil.GatherAndCompare(reg, strings.NewReader(want), "edgelimit_node_stat")
	require.NoError(t, err)
}
