package metrics_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/metrics"
	"github.com/stretchr/testify/require"
)

// downPeek is a limiter whose store is down for Peek: a blind denial with
// an error matching core.ErrUnavailable.
type downPeek struct{ core.Limiter }

func (downPeek) Peek(context.Context, string, time.Time) (core.Decision, error) {
	return core.Decision{Source: core.SourceFailClosed}, &core.UnavailableError{Op: "test", Err: errors.New("refused")}
}

// TestPeekErrorsCounted: a Peek's error counts in decision_errors_total by
// type, as AllowN's does, and the decision that came with an outage's
// error in peeks_total: behind a middleware that denies on a peek, a limit
// whose store is down may see peeks only, and its outage must still show
// where the package doc says to alert. It catches a Peek error left
// uncounted.
func TestPeekErrorsCounted(t *testing.T) {
	c := metrics.New()
	reg := register(t, c)
	ctx := context.Background()
	_, err := c.Wrap("store", downPeek{newLocal(t, 3)}).Peek(ctx, "k", epoch)
	require.ErrorIs(t, err, core.ErrUnavailable)
	_, err = c.Wrap("api", newLocal(t, 3)).Peek(ctx, "", epoch)
	require.ErrorIs(t, err, core.ErrInvalid)
	wantCounters(t, reg, "edgelimit_decision_errors_total", map[string]float64{
		"store/unavailable": 1,
		"api/invalid":       1,
	})
	wantCounters(t, reg, "edgelimit_peeks_total", map[string]float64{
		"store/denied/fail-closed": 1,
	})
}
