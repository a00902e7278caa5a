package metrics_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	redisbackend "github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/metrics"
	"github.com/edgelimit/edgelimit/sync/hybrid"
	"github.com/prometheus/client_golang/prometheus"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestHybridFallbackCountedByDecision: with Redis killed, a hybrid node's
// local fallback admits and counts; its decisions come with an error
// matching core.ErrUnavailable and are counted as what they are
// (allowed/local, then denied/cached-deny once over the limit), the errors
// apart. Before, they were all result="error",source="none": nobody could
// tell from the metrics whether those requests were allowed or denied.
func TestHybridFallbackCountedByDecision(t *testing.T) {
	base, proc := redistest.Client(t)
	// One dial, no retry: a call to the killed server fails at once.
	rdb := goredis.NewClient(&goredis.Options{Addr: base.Options().Addr, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { rdb.Close() })
	now := time.UnixMilli(1_800_000_000_500)
	n, err := hybrid.New(hybrid.Config{PoP: "p1", Limit: core.PerWindow(5, time.Minute), Redis: rdb,
		Margin: 0.5, Resync: -1})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = n.Close(ctx)
	})
	err = proc.Kill()
	require.NoError(t, err)
	c := metrics.New()
	reg := register(t, c)
	l := c.Wrap("api", n)
	for i := 0; i < 8; i++ {
		// A deadline only a hang reaches: the refused calls fail at once,
		// and a short one could expire on a loaded machine before the
		// local decisions this test counts.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, _ = l.AllowN(ctx, "k", now, 1)
		cancel()
	}
	// 2 local before Redis was needed, 3 local fallbacks with an error, 3
	// denied from the local count over the limit.
	wantCounters(t, reg, "edgelimit_decisions_total", map[string]float64{
		"api/allowed/local":      5,
		"api/denied/cached-deny": 3,
	})
	wantCounters(t, reg, "edgelimit_decision_errors_total", map[string]float64{"api/unavailable": 3})
}

// TestOnlySeriesThatCanMove: Wrap creates at once only the series the
// limiter can move, and the others at their first decision. Before, every
// limiter got all 12 series (allowed/cached-deny, allowed/fail-closed and
// denied/fail-open among them, which no limiter can move).
func TestOnlySeriesThatCanMove(t *testing.T) {
	rdb, _ := redistest.Client(t)
	c := metrics.New()
	reg := register(t, c)
	r, err := redisbackend.New(rdb, core.PerWindow(1, time.Minute))
	require.NoError(t, err)
	c.Wrap("redis", r) // a SourceLister: redis, fail-closed
	c.Wrap("local", newLocal(t, 1))
	c.Wrap("hinted", newLocal(t, 1), core.SourceLocal)
	want := []string{"hinted/allowed/local", "hinted/denied/local",
		"redis/allowed/redis", "redis/denied/fail-closed", "redis/denied/redis"}
	got := seriesOf(t, reg, "edgelimit_decisions_total")
	require.True(t, slices.Equal(got, want), "series at Wrap:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	_, err = c.Wrap("local", newLocal(t, 1)).AllowN(context.Background(), "k", epoch, 1)
	require.NoError(t, err)
	want = append(want, "local/allowed/local")
	slices.Sort(want)
	got = seriesOf(t, reg, "edgelimit_decisions_total")
	require.True(t, slices.Equal(got, want), "series after one local decision:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	got = seriesOf(t, reg, "edgelimit_decision_errors_total")
	require.Empty(t, got, "error series before any error: %v", got)
}

// seriesOf lists the series of family name as their label values joined by
// "/", sorted.
func seriesOf(t *testing.T, reg *prometheus.Registry, name string) []string {
	t.Helper()
	fams, err := reg.Gather()
	require.NoError(t, err, "gather")
	var out []string
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var vals []string
			for _, l := range m.GetLabel() {
				vals = append(vals, l.GetValue())
			}
			out = append(out, strings.Join(vals, "/"))
		}
	}
	slices.Sort(out)
	return out
}
