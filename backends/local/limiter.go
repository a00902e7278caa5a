package local

import (
	"context"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// Limiter is the in-process limiter: it implements core.Limiter over a
// sharded, bounded LRU of per-identity state. It is safe for concurrent use.
// The zero value is not usable; build one with New.
//
// Errors: an empty or oversized key, a weight outside 1..Max, or a time
// before the Unix epoch or past core.MaxMillis (core.CheckTime) returns an error matching
// core.ErrInvalid (and the specific sentinel) and creates no entry. No
// other error is ever returned; the ctx arguments are unused.
type Limiter struct {
	limit core.Limit
	clock core.Clock
	milli core.MilliClock // core.MilliClockOf(clock): nil means read Now
	mono  Monotonic       // ages the states (see Monotonic)
	base  int64           // mono's reading at New
	sys   bool            // clock and mono are core.SystemClock: Allow reads both at once (Stamps)
	eng   engine
}

var _ core.Limiter = (*Limiter)(nil)

// New returns a Limiter enforcing limit. It returns limit.Validate's error,
// or an error matching core.ErrInvalid for a bad option.
func New(limit core.Limit, opts ...Option) (*Limiter, error) {
	if err := limit.Validate(); err != nil {
		return nil, err
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	eng, err := newEngine(cfg, limit)
	if err != nil {
		return nil, err
	}
	milli := core.MilliClockOf(cfg.clock)
	mono := monotonicOf(cfg)
	_, sys := cfg.clock.(core.SystemClock)
	sys = sys && mono == Monotonic(core.SystemClock{})
	return &Limiter{limit: limit, clock: cfg.clock, milli: milli, mono: mono, base: mono.MonotonicMillis(), sys: sys, eng: eng}, nil
}

// newEngine builds the store for limit's algorithm.
func newEngine(cfg config, l core.Limit) (engine, error) {
	switch l.Algorithm {
	case core.FixedWindow:
		return newStore(cfg, l, (*core.WindowState).DecideFixed)
	case core.SlidingLog:
		return newStore(cfg, l, (*core.LogState).Decide)
	case core.TokenBucket:
		return newStore(cfg, l, (*core.BucketState).Decide)
	default:
		return newStore(cfg, l, (*core.WindowState).DecideSliding)
	}
}

// AllowN decides on n units for key at now and, when allowed, counts them.
func (l *Limiter) AllowN(_ context.Context, key string, now time.Time, n int64) (core.Decision, error) {
	if err := l.check(key, now, n); err != nil {
		return core.Decision{Limit: l.limit.Max}, err
	}
	return l.eng.decide(key, core.Millis(now), l.elapsed(), n, true), nil
}

// Allow is AllowN(ctx, key, clock.Now(), 1) with the limiter's Clock, read
// as milliseconds when core.MilliClockOf accepted it at New. A clock that
// reads a time before the Unix epoch or past core.MaxMillis gets core.ErrBadTime, as AllowN does.
func (l *Limiter) Allow(ctx context.Context, key string) (core.Decision, error) {
	if l.milli == nil {
		return l.AllowN(ctx, key, l.clock.Now(), 1)
	}
	if err := core.ValidateKey(key); err != nil { // weight 1 always fits a valid limit
		return core.Decision{Limit: l.limit.Max}, err
	}
	if l.sys {
		ms, mono := core.SystemClock{}.Stamps()
		return l.decideStamped(key, ms, max(mono-l.base, 0))
	}
	return l.decideStamped(key, l.milli.UnixMilli(), l.elapsed())
}

// decideStamped counts one unit of key at Unix milliseconds ms, refusing
// a time before the epoch with core.ErrBadTime (core.CheckMillis).
func (l *Limiter) decideStamped(key string, ms, mono int64) (core.Decision, error) {
	if err := core.CheckMillis(ms); err != nil {
		return core.Decision{Limit: l.limit.Max}, err
	}
	return l.eng.decide(key, ms, mono, 1, true), nil
}

// Peek reports the decision one unit would get at now without counting it;
// Remaining is the quota before spending. A key not held is not stored; a key
// held counts as used for the LRU order (see the package doc on promotion).
func (l *Limiter) Peek(ctx context.Context, key string, now time.Time) (core.Decision, error) {
	return l.PeekN(ctx, key, now, 1)
}

// PeekN is Peek for n units (core.PeekerN): the decision AllowN of n units
// would make at now, counting nothing; its RetryAfter is the wait until n
// units fit. Errors as AllowN's.
func (l *Limiter) PeekN(_ context.Context, key string, now time.Time, n int64) (core.Decision, error) {
	if err := l.check(key, now, n); err != nil {
		return core.Decision{Limit: l.limit.Max}, err
	}
	return l.eng.decide(key, core.Millis(now), l.elapsed(), n, false), nil
}

// Reset forgets everything counted for key. Resetting a key not held is not
// an error.
func (l *Limiter) Reset(_ context.Context, key string) error {
	if err := core.ValidateKey(key); err != nil {
		return err
	}
	l.eng.remove(key)
	return nil
}

// Limit returns the policy enforced.
func (l *Limiter) Limit() core.Limit { return l.limit }

// DeadlineBound reports true: a decision waits on no store, only on its
// shard's lock for the decision's arithmetic, so it never outlasts a
// deadline by waiting. The middleware then calls it on the request's
// goroutine, and waits for its decision however late a loaded machine
// runs it (see package middleware, DeadlineBound).
func (l *Limiter) DeadlineBound() bool { return true }

// Len returns how many identities are held now, at most the capacity.
func (l *Limiter) Len() int { return l.eng.length() }

// Evictions returns how many identities were forgotten, since New, while
// their state still held counts, to make room for new ones. Each such
// eviction may later admit that identity wrongly. Idle identities dropped
// after their state fully reset, and states forgotten once their time to
// live passed (see "A clock put back" in the package doc), are not
// counted: they lose nothing Redis would have kept.
func (l *Limiter) Evictions() uint64 { return l.eng.evictions() }

// State returns a copy of key's stored state and true, or the zero State and
// false when key is not held or its state has expired by monotonic time
// (see Monotonic). It neither counts nor changes recency.
func (l *Limiter) State(key string) (State, bool) {
	var st State
	ok := l.eng.snapshot(key, l.elapsed(), &st)
	return st, ok
}

// elapsed returns the monotonic milliseconds since New, never negative.
func (l *Limiter) elapsed() int64 { return max(l.mono.MonotonicMillis()-l.base, 0) }

func (l *Limiter) check(key string, now time.Time, n int64) error {
	if err := core.ValidateKey(key); err != nil {
		return err
	}
	if err := core.CheckTime(now); err != nil {
		return err
	}
	return l.limit.CheckWeight(n)
}
