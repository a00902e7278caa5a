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
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

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
