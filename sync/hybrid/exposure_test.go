package hybrid

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// TestExposureCountsUnacknowledgedUnits: with Config.PoPs = 8 (margin 0.1,
// limit 100), a PoP's own units Redis has not acknowledged count 8 times
// against the margin: a fresh PoP holding k of them admits locally while
// 8k + 1 ≤ 90, so 12 (k = 0..11) and the 13th goes to Redis, where
// without PoPs it admits 90 locally. Once Redis acknowledges them (the
// Redis-decided unit by its reply, the rest by a Sync) they count once,
// as every unit of the view does: 13 + 8k + 1 ≤ 90 leaves 10 more.
func TestExposureCountsUnacknowledgedUnits(t *testing.T) {
	for _, tc := range []struct {
		pops, local int
	}{{0, 90}, {1, 90}, {8, 12}} {
		e := newEnv(t, false)
		clock := core.NewManualClock(t0)
		n, err := New(Config{PoP: "pa", Limit: core.PerWindow(100, 10*time.Second), Redis: e.rdb,
			Clock: clock, Resync: -1, Margin: 0.1, PoPs: tc.pops, Namespace: "exp"})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		local := func() int { // local admissions before the first request decided at Redis
			for k := 0; ; k++ {
				d, err := n.AllowN(ctx, "k", t0, 1)
				if err != nil || !d.Allowed {
					t.Fatalf("PoPs %d, request %d: %+v, %v", tc.pops, k, d, err)
				}
				if d.Source == core.SourceRedis {
					return k
				}
			}
		}
		if got := local(); got != tc.local {
			t.Errorf("PoPs %d: %d local admissions before Redis, want %d", tc.pops, got, tc.local)
		}
		if err := n.Sync(ctx, t0); err != nil {
			t.Fatal(err)
		}
		if tc.pops == 8 {
			if got := local(); got != 10 {
				t.Errorf("PoPs 8 after a Sync: %d local admissions before Redis, want 10", got)
			}
		}
		n.Close(ctx)
	}
	if _, err := New(Config{PoP: "pa", Limit: core.PerWindow(1, time.Second), Redis: newEnv(t, false).rdb, PoPs: -1}); !errors.Is(err, ErrBadConfig) {
		t.Errorf("PoPs -1: %v, want ErrBadConfig", err)
	}
}
