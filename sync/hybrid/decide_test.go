package hybrid

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

func TestHotPathMakesNoRedisCall(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", func(c *Config) { c.Margin = 0.2 })
	now := e.clock.Now()
	for i := 0; i < 50; i++ {
		mustAllow(t, n, fmt.Sprint("warm", i), now)
	}
	mustSync(t, n, now)
	before := e.cmds.n.Load()
	for r := 0; r < 20; r++ {
		for i := 0; i < 50; i++ {
			if d := mustAllow(t, n, fmt.Sprint("warm", i), now); d.Source != core.SourceLocal || !d.Allowed {
				t.Fatalf("decision %+v, want local allow", d)
			}
		}
	}
	if got := e.cmds.n.Load() - before; got != 0 {
		t.Fatalf("1000 warm local decisions sent %d Redis commands, want 0", got)
	}
}

// TestHeadroom: far below → local; within Margin → Redis; over → cached deny.
func TestHeadroom(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", func(c *Config) { c.Limit = core.PerWindow(10, 10*time.Second); c.Margin = 0.3 })
	now := e.clock.Now()
	var srcs []core.Source
	for i := 0; i < 12; i++ {
		d := mustAllow(t, n, "k", now)
		srcs = append(srcs, d.Source)
		if d.Allowed != (i < 10) {
			t.Fatalf("request %d: allowed=%v", i, d.Allowed)
		}
	}
	want := []core.Source{0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 2} // Redis once est+1 > 7
	if fmt.Sprint(srcs) != fmt.Sprint(want) {
		t.Fatalf("sources %v, want %v", srcs, want)
	}
	if got := e.redisTotal("el", "k", e.idx(n)); got != 10 {
		t.Fatalf("Redis holds %d, want 10 (7 sent with the first Redis decision + 3)", got)
	}
	e.clock.Advance(10 * time.Second) // next window: prev=10 weighs 50%
	d := mustAllow(t, n, "k", e.clock.Now())
	if d.Source != core.SourceCachedDeny && d.Source != core.SourceRedis {
		t.Fatalf("after roll: %+v", d)
	}
	e.clock.Advance(10 * time.Second)
	if d := mustAllow(t, n, "k", e.clock.Now()); !d.Allowed || d.Source != core.SourceLocal {
		t.Fatalf("two windows later: %+v", d)
	}
}

func TestStalenessIsAgeOfLastRedisRefresh(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", nil)
	mustAllow(t, n, "k", e.clock.Now())
	mustSync(t, n, e.clock.Now())
	e.clock.Advance(1500 * time.Millisecond)
	if d := mustAllow(t, n, "k", e.clock.Now()); d.Staleness != 1500*time.Millisecond {
		t.Fatalf("staleness %v, want 1.5s", d.Staleness)
	}
}

func TestBadInput(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", nil)
	ctx := context.Background()
	if _, err := n.AllowN(ctx, "", e.clock.Now(), 1); !errors.Is(err, core.ErrEmptyKey) {
		t.Fatalf("empty key: %v", err)
	}
	if _, err := n.AllowN(ctx, "k", e.clock.Now(), 101); !errors.Is(err, core.ErrBadWeight) {
		t.Fatalf("weight: %v", err)
	}
	if d, err := n.Peek(ctx, "k", e.clock.Now()); err != nil || d.Remaining != 100 {
		t.Fatalf("peek: %+v %v", d, err)
	}
	mustAllow(t, n, "k", e.clock.Now())
	if err := n.Reset(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if c, _ := n.Counts("k", e.clock.Now()); c != 0 {
		t.Fatalf("after reset: %d", c)
	}
}

func TestFailClosedAndFailLocal(t *testing.T) {
	for _, closed := range []bool{false, true} {
		e := newEnv(t, false)
		n := e.node("a", func(c *Config) {
			c.Limit = core.PerWindow(10, 10*time.Second)
			c.Margin = 0.5
			c.FailClosed = closed
		})
		e.proc.Kill()
		now := e.clock.Now()
		for i := 0; i < 5; i++ {
			mustAllow(t, n, "k", now) // far below: local, no error
		}
		d, err := n.AllowN(context.Background(), "k", now, 1)
		if !errors.Is(err, core.ErrUnavailable) {
			t.Fatalf("closed=%v: err %v", closed, err)
		}
		if closed && (d.Allowed || d.Source != core.SourceFailClosed) {
			t.Fatalf("fail closed: %+v", d)
		}
		if !closed && (!d.Allowed || d.Source != core.SourceLocal) {
			t.Fatalf("fail local: %+v", d)
		}
	}
}
