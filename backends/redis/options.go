package redis

import (
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// DefaultTimeout bounds each call to Redis unless WithTimeout says otherwise.
const DefaultTimeout = time.Second

// FailClosedRetry is the RetryAfter of a fail-closed decision: a hint, since
// the store's state is unknown.
const FailClosedRetry = time.Second

// Option configures a Limiter; pass options to New.
type Option func(*config)

type config struct {
	prefix     string
	clock      core.Clock
	serverTime bool
	failOpen   bool
	timeout    time.Duration
	slack      time.Duration
	slackSet   bool // WithExpirySlack given; otherwise slack is the timeout
	pipe       bool
	pipeWindow time.Duration
	pipeMax    int
	buckets    int  // WithBuckets' n; 0: one key per identity
	bucketsSet bool // WithBuckets given; otherwise DefaultBuckets
}

func defaults() config {
	return config{prefix: DefaultPrefix, clock: core.SystemClock{}, timeout: DefaultTimeout}
}

// WithPrefix sets the namespace of every key (default "el"). A prefix with
// '{' or '}' makes New fail with an error matching core.ErrInvalid.
func WithPrefix(p string) Option { return func(c *config) { c.prefix = p } }

// WithClock sets the clock Allow reads (default core.SystemClock{}). A nil
// clock makes New fail.
func WithClock(clk core.Clock) Option { return func(c *config) { c.clock = clk } }

// WithServerTime makes the scripts read Redis' own clock (TIME) instead of
// the caller's now, so callers whose clocks disagree still share windows.
// The now passed to AllowN and Peek is then ignored.
func WithServerTime() Option { return func(c *config) { c.serverTime = true } }

// WithFailOpen allows requests (Source core.SourceFailOpen) when Redis
// cannot answer. The default is fail-closed: deny, Source
// core.SourceFailClosed. Either way the error matches core.ErrUnavailable.
func WithFailOpen() Option { return func(c *config) { c.failOpen = true } }

// WithTimeout bounds every call to Redis to d (default DefaultTimeout). The
// bound reaches a Redis that accepts connections but does not answer only
// when the go-redis client (or the one a type of yours embeds) has
// ContextTimeoutEnabled, or with
// WithPipelining; otherwise such a call lasts the client's ReadTimeout (5 s
// by default). A refused connection fails within d either way. d must be
// positive.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithExpirySlack adds d to every key's TTL (default: the timeout,
// WithTimeout's d or DefaultTimeout). A decision is stamped with now before
// its script runs, and a call may run at Redis up to the timeout after it
// starts (a pipelining window, a queue, a slow network), so a key that
// expired exactly when its state stops mattering by the stamps would be gone
// for a request stamped inside its window that arrives late, which would then
// count from zero and be admitted. With the default, every request that
// reaches Redis within the timeout of its stamp finds its window's state.
// Raise d when callers stamp requests earlier than they call (several limits
// decided in turn with one now), when their clocks disagree, or when now is
// a virtual clock slower than the wall clock; 0 makes keys expire at the
// end of their state, the least memory. d must not be negative.
func WithExpirySlack(d time.Duration) Option {
	return func(c *config) { c.slack, c.slackSet = d, true }
}

// WithPipelining turns on implicit pipelining: decisions of concurrent
// callers share pipelines of EVALSHA calls (each still its own atomic
// script, each caller getting its own answer). A call is sent at once when
// no pipeline is in flight; otherwise it waits with the others until window
// has passed since the first of them arrived or maxBatch are waiting, and
// goes out as a second pipeline (at most two in flight) or when one returns.
// A pipeline carries at most maxBatch calls. Off by default. window must not
// be negative and maxBatch must be at least 1.
func WithPipelining(window time.Duration, maxBatch int) Option {
	return func(c *config) { c.pipe, c.pipeWindow, c.pipeMax = true, window, maxBatch }
}

func (c *config) validate() error {
	if !c.slackSet {
		c.slack = c.timeout
	}
	if !c.bucketsSet {
		c.buckets = DefaultBuckets
	}
	if err := validBuckets(c.buckets); err != nil {
		return err
	}
	switch {
	case !validPrefix(c.prefix):
		return fmt.Errorf("%w: prefix %q must not contain braces", core.ErrInvalid, c.prefix)
	case c.clock == nil:
		return fmt.Errorf("%w: nil clock", core.ErrInvalid)
	case c.timeout <= 0:
		return fmt.Errorf("%w: timeout must be positive", core.ErrInvalid)
	case c.slack < 0:
		return fmt.Errorf("%w: negative expiry slack", core.ErrInvalid)
	case c.pipe && (c.pipeWindow < 0 || c.pipeMax < 1):
		return fmt.Errorf("%w: bad pipelining window or batch", core.ErrInvalid)
	}
	return nil
}
