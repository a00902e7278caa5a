package engine

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedisLossForgetsCounts: with Redis' state lost at a third of the
// trace (Faults.RedisLoss), pure Redis' calls arriving after it find every
// identity's count gone, so it admits more than without the loss and its
// worst identity goes further past the limit; the budget limiter's run
// goes on over the emptied Redis (its Calls run as EVAL on an empty
// keyspace), deciding otherwise than without it. Both runs report the
// fault's own row. A loss that never happened (the fault ignored) fails
// these checks; a budget run that could not go on after it fails with
// the script's error (checked by hand: without SCRIPT FLUSH's EVAL
// fallback in budget.ExecJobs, "NOSCRIPT").
func TestRedisLossForgetsCounts(t *testing.T) {
	rdb, p := redistest.Client(t)
	run := func(mode string, lose bool) Result {
		t.Helper()
		require.NoError(t, rdb.FlushAll(context.Background()).Err())
		e := testEnv(t, "mixed")
		e.RedisAddr = p.Addr
		if lose {
			e.Faults.RedisLoss = e.Trace.Duration / 3
		}
		r, err := Run(context.Background(), e, mode)
		require.NoError(t, err, "%s, loss %v", mode, lose)
		return r
	}
	kept, lost := run("redis", false), run("redis", true)
	t.Logf("pure Redis: %d admitted, worst %.2f; with the loss %d, worst %.2f", kept.Allowed, kept.MaxOveradmission, lost.Allowed, lost.MaxOveradmission)
	assert.Greater(t, lost.Allowed, kept.Allowed, "pure Redis forgets the counts: it admits more")
	assert.Greater(t, lost.MaxOveradmission, kept.MaxOveradmission, "pure Redis forgets the counts: its worst identity goes further")
	require.Len(t, lost.Faults, 1, "the loss has its row")
	assert.Positive(t, lost.Faults[0].Decisions, "requests fell in the loss's row")

	bk, bl := run("budget", false), run("budget", true)
	t.Logf("budget: %d admitted, worst %.2f, %d round trips; with the loss %d, worst %.2f, %d round trips",
		bk.Allowed, bk.MaxOveradmission, bk.RedisRoundTrips, bl.Allowed, bl.MaxOveradmission, bl.RedisRoundTrips)
	require.Len(t, bl.Faults, 1, "the loss has its row")
	assert.Positive(t, bl.Faults[0].Decisions, "requests fell in the loss's row")
	assert.NotEqual(t, bk.Allowed, bl.Allowed, "the loss changed what the budget limiter admitted (it was applied)")
}

// TestRedisLossRunsQueuedCallsFirst: a Call that reached Redis before the
// loss and waits in the pipeline runs before Redis is emptied (lose), so
// it finds the state as it was and its effect goes with the loss; after
// it, Redis holds no key. Running the pipeline after FLUSHALL instead
// leaves the Call's writes in Redis and the pipeline still queued.
func TestRedisLossRunsQueuedCallsFirst(t *testing.T) {
	rdb, p := redistest.Client(t)
	ctx := context.Background()
	e := testEnv(t, "mixed")
	e.RedisAddr, e.FreeCredit = p.Addr, -1 // no free credit: a request's first unit is a Call
	s := &budgetSim{e: e, ctx: ctx, rdb: rdb, faults: e.Faults}
	m, err := s.machine(0)
	require.NoError(t, err)
	d, c := m.Request(s.clock(0, time.Second), "k", 1)
	require.NotNil(t, c, "a decision Call: %+v", d)
	f := &budgetFlight{m: m, c: c}
	s.pipe, s.arrivals = []event{{at: time.Second + 2*time.Millisecond, kind: evReply, msg: f}}, []time.Duration{time.Second + time.Millisecond}
	require.NoError(t, s.lose())
	require.NoError(t, f.err, "the queued Call ran")
	require.NotNil(t, f.res, "the queued Call ran before the loss")
	assert.Equal(t, int64(1), f.res.Items[0].Allowed, "on the state before the loss: admitted")
	assert.Empty(t, s.pipe, "nothing left to run after the loss")
	assert.Zero(t, rdb.DBSize(ctx).Val(), "Redis holds no key after the loss, the Call's writes included")
}

// TestRedisLossWithinTheTrace: a loss at or past the trace's end is
// refused before anything runs (it would empty Redis before its memory
// is read and judge nothing).
func TestRedisLossWithinTheTrace(t *testing.T) {
	e := testEnv(t, "mixed")
	e.Faults.RedisLoss = e.Trace.Duration
	_, err := Run(context.Background(), e, "budget")
	require.Error(t, err, "a loss at the trace's end")
	assert.Contains(t, err.Error(), "past the trace's end")
}
