package core

import (
	"context"
	"time"
)

// Limiter is what every backend and the budget limiter implement. All methods are
// safe for concurrent use.
//
// Errors: bad input (empty or oversized key, weight out of 1..Max, a time
// before the Unix epoch or past MaxMillis: CheckTime) returns an error matching ErrInvalid and
// changes nothing. A store that cannot be
// reached returns an error matching ErrUnavailable together with the decision
// the limiter's fail mode prescribes (see each backend).
type Limiter interface {
	// AllowN decides on n units for key at time now and, when allowed,
	// counts them.
	AllowN(ctx context.Context, key string, now time.Time, n int64) (Decision, error)
	// Allow is AllowN(ctx, key, clock.Now(), 1) with the limiter's Clock.
	Allow(ctx context.Context, key string) (Decision, error)
	// Peek reports the decision a single unit would get at now, without
	// counting anything. Remaining is the quota before any spending.
	Peek(ctx context.Context, key string, now time.Time) (Decision, error)
	// Reset forgets everything counted for key.
	Reset(ctx context.Context, key string) error
	// Limit returns the policy enforced.
	Limit() Limit
}

// PeekerN is implemented by limiters that report the decision n units
// would get at now without counting anything (backends/local,
// backends/redis and sync/budget: the same decision AllowN of n units
// would make, with RetryAfter the wait until n units fit, and Remaining
// the quota before spending). Peek is PeekN of one unit. Errors as
// AllowN's: a weight outside 1..Max is ErrBadWeight. metrics.Wrap's
// wrapper implements it when the limiter it wraps does.
type PeekerN interface {
	PeekN(ctx context.Context, key string, now time.Time, n int64) (Decision, error)
}
