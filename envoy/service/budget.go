package service

import (
	"context"
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/budget"
	"github.com/nats-io/nats.go"
	goredis "github.com/redis/go-redis/v9"
)

// BudgetOptions tunes a BudgetBackend. PoP, Redis and PoPs are required.
type BudgetOptions struct {
	PoP   string                  // this instance's PoP name, unique among the instances
	Redis goredis.UniversalClient // shared by every instance
	// PoPs is the number of instances that may admit one identity. Each
	// limit's free credit is budget.AutoFreeCredit's choice for it: one
	// unit per identity, window and instance where the limit is large and
	// its window long enough for that reservation to cost little, else
	// none.
	PoPs int
	// Namespace prefixes every limit's Redis keys; each limit gets
	// Namespace-<max>-<window ms>. "" = "el".
	Namespace  string
	FailClosed bool          // Redis unreachable: deny what no grant or free credit covers (else decide on the view)
	NoWait     bool          // budget.Config.NoWait: deny here a request no grant covers once Redis called the identity contested and 3/8 of its limit is known admitted
	Sync       time.Duration // sync interval; 0 = 100 ms
	Clock      core.Clock    // nil = the system clock
	// NATS, when set, has every limiter gossip over it (budget.Limiter's
	// UseNATS): identities Redis counted over their limit are denied at
	// the other instances without a round trip. nil = no gossip; a
	// connection that cannot subscribe (closed) leaves a limiter without it
	// (OnGossipError says so).
	NATS *nats.Conn
	// OnLimiter, when set, is called with every limiter built (for its stats).
	OnLimiter func(name string, l *budget.Limiter)
	// OnRelease, when set, is called with every limiter the pool released
	// (PoolOptions), before another of its limit is built: undo there
	// what OnLimiter did. It must be quick: the pool's lock is held.
	OnRelease func(name string, l *budget.Limiter)
	// Pool bounds the limiters kept besides the configuration's.
	Pool PoolOptions
	// OnGossipError, when set, is called when a limiter built could not
	// gossip over NATS (it decides without gossip).
	OnGossipError func(name string, err error)
}

// BudgetBackend is the local-first limiter of sync/budget: each instance
// admits without asking Redis only from budget Redis has already accounted
// for (grants, one free unit per identity and window), so the instances
// together never pass what one Redis-only limiter would admit; a request
// no grant covers is decided at Redis. One budget.Limiter per distinct
// limit. The sliding window only. The zero value is not usable; build one
// with NewBudget.
type BudgetBackend struct {
	p pool
	// newLimiter builds the limiter of a limit, not started, and its
	// Namespace, for the pool and CheckClient.
	newLimiter func(core.Limit) (*budget.Limiter, string, error)
}

// NewBudget returns a BudgetBackend. Its limiters start their Sync loops
// when built; a release (PoolOptions) and Close run a last Sync of each. The caller closes the Redis
// client after Close. A limit of another algorithm than the sliding window
// fails Limiter with an error matching core.ErrInvalid.
func NewBudget(o BudgetOptions) *BudgetBackend {
	ns := o.Namespace
	if ns == "" {
		ns = "el"
	}
	b := &BudgetBackend{}
	b.newLimiter = func(l core.Limit) (*budget.Limiter, string, error) {
		if l.Algorithm != core.SlidingWindow {
			return nil, "", fmt.Errorf("%w: the budget backend counts the sliding window only, not %s", core.ErrBadAlgorithm, l.Algorithm)
		}
		name := budgetName(ns, l)
		lim, err := budget.New(budget.Config{PoP: o.PoP, Limit: l, PoPs: o.PoPs, Namespace: name,
			FailClosed: o.FailClosed, NoWait: o.NoWait, SyncInterval: o.Sync}, o.Redis, o.Clock)
		return lim, name, err
	}
	b.p.build = func(l core.Limit) (core.Limiter, error) {
		lim, name, err := b.newLimiter(l)
		if err != nil {
			return nil, err
		}
		if o.NATS != nil {
			// gossip only spares round trips: a connection that cannot
			// subscribe (closed) leaves the limit decided without it
			if err := lim.UseNATS(o.NATS); err != nil && o.OnGossipError != nil {
				o.OnGossipError(name, err)
			}
		}
		lim.Start()
		if o.OnLimiter != nil {
			o.OnLimiter(name, lim)
		}
		return lim, nil
	}
	b.p.close = func(ctx context.Context, l core.Limiter) error {
		return l.(*budget.Limiter).Close(ctx)
	}
	if o.OnRelease != nil {
		b.p.released = func(l core.Limit, lim core.Limiter) {
			o.OnRelease(budgetName(ns, l), lim.(*budget.Limiter))
		}
	}
	b.p.clock, b.p.opts = o.Clock, o.Pool
	return b
}

// budgetName is the Namespace of l's limiter.
func budgetName(ns string, l core.Limit) string {
	return fmt.Sprintf("%s-%d-%d", ns, l.Max, l.WindowMillis())
}

// Acquire implements Backend; a limit other than the sliding window fails
// with core.ErrBadAlgorithm (which matches core.ErrInvalid).
func (b *BudgetBackend) Acquire(l core.Limit) (core.Limiter, func(), error) { return b.p.get(l) }

// Keep implements Backend.
func (b *BudgetBackend) Keep(limits []core.Limit) { b.p.keep(limits) }

// Sweep implements Sweeper.
func (b *BudgetBackend) Sweep() { b.p.sweep() }

// Pool implements Backend.
func (b *BudgetBackend) Pool() PoolStats { return b.p.stats() }

// Close implements Backend: every limiter stops and runs a last Sync.
func (b *BudgetBackend) Close(ctx context.Context) error { return b.p.closeAll(ctx) }

// Name implements Backend.
func (b *BudgetBackend) Name() string { return "budget" }
