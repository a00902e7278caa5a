package hybrid

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/clocktest"
)

// TestAllowReadsMilliClock: Allow reads a core.MilliClock through UnixMilli,
// once per call, and decides at that time.
func TestAllowReadsMilliClock(t *testing.T) {
	e := newEnv(t, false)
	clk := &clocktest.Counting{ManualClock: e.clock}
	n := e.node("a", func(c *Config) { c.Clock = clk; c.Limit = core.PerWindow(10, 10*time.Second) })
	before := clk.Reads()
	for i := 0; i < 10; i++ {
		if d, err := n.Allow(context.Background(), "k"); err != nil || !d.Allowed {
			t.Fatalf("Allow %d: %+v, %v", i, d, err)
		}
	}
	if got := clk.Reads() - before; got != 10 {
		t.Fatalf("10 Allow calls read UnixMilli %d times, want 10", got)
	}
	if d := mustAllow(t, n, "k", e.clock.Now()); d.Allowed {
		t.Fatalf("11th unit at the clock's time admitted: %+v", d)
	}
}

// TestAllowReadsOverriddenNow: a Clock that embeds a MilliClock but
// overrides Now (an hour ahead here) is read through its Now, so Allow
// counts at the clock's time, not at the embedded UnixMilli's.
func TestAllowReadsOverriddenNow(t *testing.T) {
	e := newEnv(t, false)
	skewed := clocktest.Skewed{ManualClock: e.clock, Skew: time.Hour}
	n := e.node("a", func(c *Config) { c.Clock = skewed; c.Limit = core.PerWindow(10, 10*time.Second) })
	for i := 0; i < 10; i++ {
		if d, err := n.Allow(context.Background(), "k"); err != nil || !d.Allowed {
			t.Fatalf("Allow %d: %+v, %v", i, d, err)
		}
	}
	if d := mustAllow(t, n, "k", skewed.Now()); d.Allowed {
		t.Fatalf("11th unit at the clock's time (an hour ahead) admitted: %+v", d)
	}
}
