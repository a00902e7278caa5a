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
// seed, which would pick the victims, changes from run to run).
func runLocal(ctx context.Context, e *Env) (*outcome, error) {
	c := e.Trace.Config
	pops := make([]*local.Limiter, c.PoPs)
	for p := range pops {
		l, err := local.New(e.Limit, local.WithCapacity(max(c.Identities, 1)), local.WithShards(1))
		if err != nil {
			return nil, fmt.Errorf("local limiter: %w", err)
		}
		pops[p] = l
	}
	o := newOutcome(len(e.Trace.Requests))
	for i, r := range e.Trace.Requests {
		d, err := pops[r.PoP].AllowN(ctx, e.Key(r.ID), e.PoPAt(i), int64(r.N))
		if err != nil {
			return nil, fmt.Errorf("local decision %d: %w", i, err)
		}
		o.allowed[i] = d.Allowed
		e.progress(i + 1)
	}
	return o, nil
}
