package redis

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoScriptRecovery: after SCRIPT FLUSH the next decision costs one EVAL
// retry and succeeds, alone and pipelined.
func TestNoScriptRecovery(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for i, opts := range [][]Option{nil, {WithPipelining(50*time.Microsecond, 8)}} {
		for _, lim := range everyLimit(core.PerWindow(10, time.Minute)) {
			l := newLimiter(t, c, lim, append(opts, WithPrefix(fmt.Sprint("ns", i)))...)
			_, err := l.Allow(ctx, "ns")
			require.NoError(t, err)
			require.NoError(t, c.ScriptFlush(ctx).Err())
			before := l.Stats()
			d, err := l.Allow(ctx, "ns")
			require.NoError(t, err, "%s after SCRIPT FLUSH: %+v %v", lim, d, err)
			require.True(t, d.Allowed, "%s after SCRIPT FLUSH: %+v %v", lim, d, err)
			require.Equal(t, int64(8), d.Remaining, "%s after SCRIPT FLUSH: %+v %v", lim, d, err)
			trips := l.Stats().RoundTrips - before.RoundTrips
			assert.Equal(t, uint64(2), trips, "%s: %d round trips after SCRIPT FLUSH, want 2 (EVALSHA, EVAL)", lim, trips)
		}
	}
}

// TestRedisDown: a killed Redis gives an error matching ErrUnavailable
// within the timeout and the configured fail-mode decision; after a restart
// decisions work again.
func TestRedisDown(t *testing.T) {
	c, proc := redistest.Client(t)
	ctx := context.Background()
	lim := core.PerWindow(10, time.Minute)
	const timeout = 200 * time.Millisecond
	closed := newLimiter(t, c, lim, WithTimeout(timeout), WithPrefix("closed"))
	open := newLimiter(t, c, lim, WithTimeout(timeout), WithFailOpen(), WithPrefix("open"))
	piped := newLimiter(t, c, lim, WithTimeout(timeout), WithPipelining(100*time.Microsecond, 16), WithPrefix("piped"))
	for _, l := range []*Limiter{closed, open, piped} {
		_, err := l.Allow(ctx, "down")
		require.NoError(t, err)
	}
	proc.Kill()
	check := func(name string, l *Limiter, allowed bool, src core.Source) {
		t.Helper()
		start := time.Now()
		d, err := l.Allow(ctx, "down")
		took := time.Since(start)
		assert.ErrorIs(t, err, core.ErrUnavailable, "%s: err %v, want ErrUnavailable", name, err)
		var ue *core.UnavailableError
		assert.True(t, errors.As(err, &ue), "%s: err %T, want *core.UnavailableError", name, err)
		if assert.Equal(t, allowed, d.Allowed, "%s: decision %+v, want allowed=%v source %s", name, d, allowed, src) {
			assert.Equal(t, src, d.Source, "%s: decision %+v, want allowed=%v source %s", name, d, allowed, src)
		}
		// No call outlives its timeout plus the scheduler's slack, which is
		// generous (a loaded machine stalls goroutines for seconds); the
		// errors above are what the test is about.
		assert.LessOrEqual(t, took, timeout+schedulerSlack, "%s: took %s, timeout %s plus the scheduler's slack %s", name, took, timeout, schedulerSlack)
		t.Logf("%s with Redis down: %s, %v", name, took, err)
	}
	check("fail-closed", closed, false, core.SourceFailClosed)
	check("fail-open", open, true, core.SourceFailOpen)
	check("pipelined", piped, false, core.SourceFailClosed)
	err := closed.Reset(ctx, "down")
	assert.ErrorIs(t, err, core.ErrUnavailable, "Reset with Redis down: %v", err)
	err = proc.Restart()
	require.NoError(t, err)
	for _, l := range []*Limiter{closed, open, piped} {
		d, err := l.Allow(ctx, "down")
		assert.NoError(t, err, "after restart: %+v %v, want a fresh Redis decision", d, err)
		assert.True(t, d.Allowed, "after restart: %+v %v, want a fresh Redis decision", d, err)
		assert.Equal(t, core.SourceRedis, d.Source, "after restart: %+v %v, want a fresh Redis decision", d, err)
		assert.Equal(t, int64(9), d.Remaining, "after restart: %+v %v, want a fresh Redis decision", d, err)
	}
}
