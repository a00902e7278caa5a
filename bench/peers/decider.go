// Package peers puts every limiter the benchmarks compare, ours and the peer
// libraries alike, behind one shape, Decider, so that every row of a table
// runs exactly the same measuring loop and only the limiter changes.
//
// Each constructor takes the policy as "max units per window" and maps it
// onto the peer's own vocabulary (a token bucket's rate and burst, a fixed
// window's period, GCRA's rate and period) as closely as that peer allows.
package peers

import "context"

// Decider decides on one request of key and reports whether it was
// admitted. It is safe for concurrent use.
type Decider func(ctx context.Context, key string) (bool, error)
