package service

import (
	"context"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/core"
)

// LocalBackend keeps every count in this process (backends/local): each
// server instance limits on its own. The zero value is not usable; build one
// with NewLocal.
type LocalBackend struct{ p pool }

// NewLocal returns a LocalBackend whose limiters use clock (nil: the system
// clock) and hold at most capacity identities each (0: local's default).
func NewLocal(clock core.Clock, capacity int) *LocalBackend {
	b := &LocalBackend{}
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

// Limiter implements Backend.
func (b *LocalBackend) Limiter(l core.Limit) (core.Limiter, error) { return b.p.get(l) }

// Close implements Backend; counts are dropped.
func (b *LocalBackend) Close(ctx context.Context) error { return b.p.closeAll(ctx) }

// Name implements Backend.
func (b *LocalBackend) Name() string { return "local" }
