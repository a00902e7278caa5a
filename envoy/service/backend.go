package service

import (
	"context"

	"github.com/edgelimit/edgelimit/core"
)

// Backend hands out one limiter per distinct core.Limit (see pool); the
// service keys every identity by domain, descriptor and window, so rules
// sharing a limit share a limiter without sharing counters.
type Backend interface {
	// Acquire returns the limiter enforcing l, built at the first call or
	// after the backend released it, and done, which the caller must call
	// exactly once when it no longer uses the limiter: a limiter is never
	// released between Acquire and done. Errors are the backend's own for a limit it
	// cannot enforce (the budget backend: any algorithm but the sliding
	// window); after Close, core.ErrClosed.
	Acquire(l core.Limit) (lim core.Limiter, done func(), err error)
	// Keep names the limits of the configuration in force (replacing the
	// previous call's): their limiters stay until Close. Every other
	// limiter (a descriptor's limit override, a limit a reload dropped) is
	// released once idle or past the bound (PoolOptions).
	Keep(limits []core.Limit)
	// Pool tells how many limiters the backend holds.
	Pool() PoolStats
	// Close stops every limiter, flushing what it has not written, within
	// ctx: it waits for the closes of limiters released before it (each
	// bounded by PoolOptions.CloseTimeout) only while ctx lives. Later
	// calls to Acquire fail with core.ErrClosed.
	Close(ctx context.Context) error
	// Name is "local", "redis" or "budget".
	Name() string
}

// Sweeper is a Backend that releases idle limiters without waiting for a
// request. The server calls Sweep every Options.SweepInterval on a
// backend that implements it (a type assertion), and never on one that
// does not, which then releases idle limiters, if at all, only when
// requests come. The local, redis and budget backends implement it; a
// wrapper of one of them forwards Sweep to keep its releases going.
type Sweeper interface {
	// Sweep looks for limiters idle long enough (PoolOptions) and releases
	// them, as a request does, whether requests come or not; a look
	// less than a quarter of PoolOptions.Idle after the previous one (by
	// the backend's clock) does nothing, so it may be called often.
	// After Close it does nothing.
	Sweep()
}
