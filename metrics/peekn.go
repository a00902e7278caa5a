package metrics

import (
	"context"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// peekerN is the decorator Wrap returns for a limiter that implements
// core.PeekerN (backends/local, backends/redis, sync/budget), so a caller
// that asks for PeekN (Envoy's service, for a weighted check) still finds
// it behind the metrics.
type peekerN struct{ *limiter }

var _ core.PeekerN = peekerN{}

// PeekN forwards to the wrapped limiter, counts the decision it reports in
// peeks_total and its error in decision_errors_total, as Peek.
func (w peekerN) PeekN(ctx context.Context, key string, now time.Time, n int64) (core.Decision, error) {
	d, err := w.next.(core.PeekerN).PeekN(ctx, key, now, n)
	w.countPeek(d, err)
	return d, err
}
