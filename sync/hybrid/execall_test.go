package hybrid

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	goredis "github.com/redis/go-redis/v9"
)

// pipelines is a go-redis hook counting the round trips that carry script
// calls: pipelines holding one (not a connection's handshake), and script
// calls sent alone (a pipeline of one Op is sent as one).
type pipelines struct{ n atomic.Int64 }

func (p *pipelines) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (p *pipelines) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if isScript(cmd) {
			p.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (p *pipelines) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		if slices.ContainsFunc(cmds, isScript) {
			p.n.Add(1)
		}
		return next(ctx, cmds)
	}
}

// contested makes two Nodes that each admitted 50 of "k"'s 100 units
// locally (margin 0.5, so every further request goes to Redis) and the
// Calls of 20 more requests, alternating a, b, a, ...: which of them Redis
// admits depends on the order it runs them (the first merges its Node's 50,
// the second then finds 100).
func contested(t *testing.T, e *env) (a, b *Node, calls []*Call) {
	t.Helper()
	margin := func(c *Config) { c.Margin = 0.5 }
	a, b = e.node("a", margin), e.node("b", margin)
	for range 50 {
		mustAllow(t, a, "k", t0)
		mustAllow(t, b, "k", t0)
	}
	for i := range 20 {
		n := []*Node{a, b}[i%2]
		_, c, err := n.Begin(context.Background(), "k", t0, 1)
		if err != nil || c == nil {
			t.Fatalf("request %d: Begin gave call %v, err %v; want a Call", i, c != nil, err)
		}
		calls = append(calls, c)
	}
	return a, b, calls
}

// completeAll completes calls in order and returns who was admitted.
func completeAll(t *testing.T, calls []*Call) []bool {
	t.Helper()
	out := make([]bool, len(calls))
	for i, c := range calls {
		d, err := c.owner.Complete(c)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		out[i] = d.Allowed
	}
	return out
}

// TestExecAllRunsInOrderAsExec: the Calls of two Nodes made with ExecAll
// in one pipeline decide exactly as Exec makes them one by one (Redis runs
// them in the order given), each counts as a round trip of its Node, and a
// Redis that lost its scripts (SCRIPT FLUSH) still runs them all, in order.
func TestExecAllRunsInOrderAsExec(t *testing.T) {
	ctx := context.Background()
	e1 := newEnv(t, false)
	_, _, one := contested(t, e1)
	for _, c := range one {
		c.owner.Exec(ctx, c)
	}
	want := completeAll(t, one)
	if !want[0] || slices.Contains(want[1:], true) {
		t.Fatalf("one by one: admitted %v, want only the first (the second merges 50 more)", want)
	}

	e2 := newEnv(t, false)
	a, b, all := contested(t, e2)
	var p pipelines
	e2.rdb.AddHook(&p)
	if err := e2.rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatalf("SCRIPT FLUSH: %v", err)
	}
	ExecAll(ctx, e2.rdb, all)
	if got := completeAll(t, all); !slices.Equal(got, want) {
		t.Fatalf("ExecAll admitted %v, Exec one by one %v", got, want)
	}
	if ra, rb := a.Stats().RedisRoundTrips, b.Stats().RedisRoundTrips; ra != 10 || rb != 10 {
		t.Fatalf("round trips counted: a %d, b %d; want 10 each", ra, rb)
	}
	if n := p.n.Load(); n != 1 {
		t.Fatalf("%d pipelines sent, want 1", n)
	}
	if got := e2.redisTotal(DefaultNamespace, "k", e2.idx(a)); got != 101 {
		t.Fatalf("Redis holds %d, want 101 (50 + 50 + the one admitted)", got)
	}
}

// TestExecAllSkipsMadeCalls: a Call already made or failed is not sent
// again.
func TestExecAllSkipsMadeCalls(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, false)
	a, _, calls := contested(t, e)
	calls[0].owner.Exec(ctx, calls[0])
	ExecAll(ctx, e.rdb, calls[:1])
	if rt := a.Stats().RedisRoundTrips; rt != 1 {
		t.Fatalf("a made %d round trips, want 1 (ExecAll skipped the made call)", rt)
	}
	if !calls[0].done || calls[1].done {
		t.Fatalf("done: made %v, unsent %v; want true, false", calls[0].done, calls[1].done)
	}
}

// TestSyncDepthPipelinesBatches: a Sync sends up to SyncDepth batches in
// one round trip to Redis (10 identities in batches of 2 at depth 3: 5
// batches, each a counted round trip, in 2 trips; a trip of one batch is a
// plain EVALSHA), and Redis holds every unit.
func TestSyncDepthPipelinesBatches(t *testing.T) {
	for _, c := range []struct{ depth, pipelines int }{{1, 5}, {3, 2}, {8, 1}} {
		e := newEnv(t, false)
		n := e.node("a", func(cfg *Config) { cfg.BatchSize, cfg.SyncDepth = 2, c.depth })
		mustAllow(t, n, "warm", t0)
		mustSync(t, n, t0) // Redis has the script: no NOSCRIPT retry below
		before := n.Stats().RedisRoundTrips
		for i := range 10 {
			mustAllow(t, n, fmt.Sprint("k", i), t0)
		}
		var p pipelines
		e.rdb.AddHook(&p)
		mustSync(t, n, t0)
		if got := p.n.Load(); got != int64(c.pipelines) {
			t.Fatalf("depth %d: %d pipelines, want %d", c.depth, got, c.pipelines)
		}
		if rt := n.Stats().RedisRoundTrips - before; rt != 5 {
			t.Fatalf("depth %d: %d round trips counted, want 5 (one per batch)", c.depth, rt)
		}
		for i := range 10 {
			if got := e.redisTotal(DefaultNamespace, fmt.Sprint("k", i), e.idx(n)); got != 1 {
				t.Fatalf("depth %d: Redis holds %d of k%d, want 1", c.depth, got, i)
			}
		}
	}
}
