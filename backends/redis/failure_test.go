package redis

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
)

// TestNoScriptRecovery: after SCRIPT FLUSH the next decision costs one EVAL
// retry and succeeds, alone and pipelined.
func TestNoScriptRecovery(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for i, opts := range [][]Option{nil, {WithPipelining(50*time.Microsecond, 8)}} {
		for _, lim := range everyLimit(core.PerWindow(10, time.Minute)) {
			l := newLimiter(t, c, lim, append(opts, WithPrefix(fmt.Sprint("ns", i)))...)
			if _, err := l.Allow(ctx, "ns"); err != nil {
				t.Fatal(err)
			}
			if err := c.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			before := l.Stats()
			d, err := l.Allow(ctx, "ns")
			if err != nil || !d.Allowed || d.Remaining != 8 {
				t.Fatalf("%s after SCRIPT FLUSH: %+v %v", lim, d, err)
			}
			if trips := l.Stats().RoundTrips - before.RoundTrips; trips != 2 {
				t.Errorf("%s: %d round trips after SCRIPT FLUSH, want 2 (EVALSHA, EVAL)", lim, trips)
			}
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
		if _, err := l.Allow(ctx, "down"); err != nil {
			t.Fatal(err)
		}
	}
	proc.Kill()
	check := func(name string, l *Limiter, allowed bool, src core.Source) {
		t.Helper()
		start := time.Now()
		d, err := l.Allow(ctx, "down")
		took := time.Since(start)
		if !errors.Is(err, core.ErrUnavailable) {
			t.Errorf("%s: err %v, want ErrUnavailable", name, err)
		}
		var ue *core.UnavailableError
		if !errors.As(err, &ue) {
			t.Errorf("%s: err %T, want *core.UnavailableError", name, err)
		}
		if d.Allowed != allowed || d.Source != src {
			t.Errorf("%s: decision %+v, want allowed=%v source %s", name, d, allowed, src)
		}
		if took > timeout+250*time.Millisecond { // scheduling slack on a busy machine
			t.Errorf("%s: took %s, timeout %s", name, took, timeout)
		}
		t.Logf("%s with Redis down: %s, %v", name, took, err)
	}
	check("fail-closed", closed, false, core.SourceFailClosed)
	check("fail-open", open, true, core.SourceFailOpen)
	check("pipelined", piped, false, core.SourceFailClosed)
	if err := closed.Reset(ctx, "down"); !errors.Is(err, core.ErrUnavailable) {
		t.Errorf("Reset with Redis down: %v", err)
	}
	if err := proc.Restart(); err != nil {
		t.Fatal(err)
	}
	for _, l := range []*Limiter{closed, open, piped} {
		d, err := l.Allow(ctx, "down")
		if err != nil || !d.Allowed || d.Source != core.SourceRedis || d.Remaining != 9 {
			t.Errorf("after restart: %+v %v, want a fresh Redis decision", d, err)
		}
	}
}
