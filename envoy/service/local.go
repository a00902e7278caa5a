package service

import (
	"context"
	"time"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/core"
)

// LocalBackend keeps every count in this process (backends/local): each
// server instance limits on its own. The zero value is not usable; build one
// with NewLocal.
type LocalBackend struct{ p pool }

// NewLocal returns a LocalBackend whose limiters use clock (nil: the system
// clock) and hold at most capacity identities each (0: local's default),
// with the default PoolOptions.
func NewLocal(clock core.Clock, capacity int) *LocalBackend {
	return NewLocalPool(clock, capacity, PoolOptions{})
}

// NewLocalPool is NewLocal with po bounding the limiters kept besides the
// configuration's. A limiter is released for idleness only once unused
// for twice its window as well, when every count it held has expired.
func NewLocalPool(clock core.Clock, capacity int, po PoolOptions) *LocalBackend {
	b := &LocalBackend{}
	b.p.clock, b.p.opts = clock, po
	b.p.minIdle = func(l core.Limit) time.Duration { return 2 * l.Window }
	b.p.build = func(l core.Limit) (core.Limiter, error) {
		opts := []local.Option{}
		if clock != nil {
			opts = append(opts, local.WithClock(clock))
		}
		if capacity > 0 {
			opts = append(opts, local.WithCapacity(capacity))
		}
		return local.New(l, opts...)
	}
	return b
}

// Acquire implements Backend.
func (b *LocalBackend) Acquire(l core.Limit) (core.Limiter, func(), error) { return b.p.get(l) }

// Keep implements Backend.
func (b *LocalBackend) Keep(limits []core.Limit) { b.p.keep(limits) }

// Sweep implements Sweeper.
func (b *LocalBackend) Sweep() { b.p.sweep() }

// Pool implements Backend.
func (b *LocalBackend) Pool() PoolStats { return b.p.stats() }

// Close implements Backend; counts are dropped.
func (b *LocalBackend) Close(ctx context.Context) error { return b.p.closeAll(ctx) }

// Name implements Backend.
func (b *LocalBackend) Name() string { return "local" }
