package redis

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sentCounter is a go-redis hook counting the commands and pipelines the
// client sends.
type sentCounter struct{ n atomic.Int64 }

func (h *sentCounter) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h *sentCounter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}

func (h *sentCounter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}

// TestCanceledCallerIsNoOutage: a caller whose context was cancelled
// before the call (an HTTP client that hung up) gets an error matching
// context.Canceled and not core.ErrUnavailable (a *CanceledError), no
// decision (the zero Decision: nothing was counted, and no fail-mode
// decision stands for a Redis that did not fail), and nothing is sent:
// AllowN, Peek, Reset and AllowEach, with and without pipelining, failing
// open or closed. It catches a cancelled caller classified as a Redis outage
// (alerts on decision_errors_total{type="unavailable"} fire when clients
// hang up) and a call sent for a caller already gone.
func TestCanceledCallerIsNoOutage(t *testing.T) {
	rdb, _ := redistest.Client(t)
	sent := &sentCounter{}
	rdb.AddHook(sent)
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	now := time.UnixMilli(1_800_000_000_000)
	for name, opts := range map[string][]Option{
		"plain": nil, "fail open": {WithFailOpen()}, "pipelined": {WithPipelining(time.Millisecond, 8)},
	} {
		l := newLimiter(t, rdb, core.PerWindow(5, time.Minute), opts...)
		_, err := l.Allow(context.Background(), "warm") // connections and script in place
		require.NoError(t, err)
		before := sent.n.Load()

		d, err := l.AllowN(gone, "k", now, 1)
		var ce *CanceledError
		assert.ErrorAs(t, err, &ce, "%s: AllowN", name)
		assert.ErrorIs(t, err, context.Canceled, "%s: AllowN", name)
		assert.NotErrorIs(t, err, core.ErrUnavailable, "%s: AllowN", name)
		assert.Equal(t, core.Decision{}, d, "%s: no decision", name)
		d, err = l.Peek(gone, "k", now)
		assert.ErrorIs(t, err, context.Canceled, "%s: Peek", name)
		assert.NotErrorIs(t, err, core.ErrUnavailable, "%s: Peek", name)
		assert.Equal(t, core.Decision{}, d, "%s: no decision", name)
		err = l.Reset(gone, "k")
		assert.ErrorIs(t, err, context.Canceled, "%s: Reset", name)
		assert.NotErrorIs(t, err, core.ErrUnavailable, "%s: Reset", name)
		out := make([]core.Decision, 2)
		err = l.AllowEach(gone, []Ask{{Key: "k", Now: now, N: 1}, {Key: "j", Now: now, N: 1}}, out)
		assert.ErrorAs(t, err, &ce, "%s: AllowEach", name)
		assert.NotErrorIs(t, err, core.ErrUnavailable, "%s: AllowEach", name)
		assert.Equal(t, []core.Decision{{}, {}}, out, "%s: AllowEach: no decisions", name)
		assert.Equal(t, before, sent.n.Load(), "%s: nothing sent for a caller already gone", name)
	}
}

// TestDeadlinePassedIsOutage: a caller whose deadline passed before Redis
// answered still gets the fail-mode decision and an error matching
// core.ErrUnavailable: the store did not answer in time. It catches a
// classification of every context error as a caller gone.
func TestDeadlinePassedIsOutage(t *testing.T) {
	rdb, _ := redistest.Client(t)
	l := newLimiter(t, rdb, core.PerWindow(5, time.Minute), WithFailOpen())
	late, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	d, err := l.AllowN(late, "k", time.UnixMilli(1_800_000_000_000), 1)
	assert.ErrorIs(t, err, core.ErrUnavailable)
	assert.Equal(t, core.SourceFailOpen, d.Source, "the fail mode decides")
	assert.True(t, d.Allowed)
}
