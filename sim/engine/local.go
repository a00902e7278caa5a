package engine

import (
	"context"
	"fmt"

	"github.com/edgelimit/edgelimit/backends/local"
)

// runLocal gives each PoP its own backends/local limiter that never learns
// of the others, on the PoP's own clock: the over-admission of counting
// alone. It adds no latency
// and makes no round trip. One shard holding every identity means no
// eviction ever, so no forgotten count blurs the figures (the LRU's hash
// seed, which would pick the victims, changes from run to run). The
// limiters age their states by the trace's true time (traceTime), not by
// the wall clock the run takes, which passes at another rate.
func runLocal(ctx context.Context, e *Env) (*outcome, error) {
	c := e.Trace.Config
	pops := make([]*local.Limiter, c.PoPs)
	var tt traceTime
	for p := range pops {
		l, err := local.New(e.Limit, local.WithCapacity(max(c.Identities, 1)), local.WithShards(1), local.WithMonotonic(&tt))
		if err != nil {
			return nil, fmt.Errorf("local limiter: %w", err)
		}
		pops[p] = l
	}
	o := newOutcome(len(e.Trace.Requests))
	for i, r := range e.Trace.Requests {
		tt.ms = r.At.Milliseconds()
		d, err := pops[r.PoP].AllowN(ctx, e.Key(r.ID), e.PoPAt(i), int64(r.N))
		if err != nil {
			return nil, fmt.Errorf("local decision %d: %w", i, err)
		}
		o.allowed[i] = d.Allowed
		e.progress(i + 1)
	}
	return o, nil
}

// traceTime is a local.Monotonic reading the true time of the request being
// decided, as an offset of the trace (requests are sorted by it, so it never
// goes back): what Redis' TTLs would count in the simulated world. runLocal
// sets it before each decision, from the one goroutine that decides.
type traceTime struct{ ms int64 }

// MonotonicMillis implements local.Monotonic.
func (t *traceTime) MonotonicMillis() int64 { return t.ms }
