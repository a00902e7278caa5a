package service

import (
	"context"
	"errors"
	"sync"

	"github.com/edgelimit/edgelimit/core"
)

// Backend hands out one limiter per distinct core.Limit; the service keys
// every identity by domain, descriptor and window, so rules sharing a limit
// share a limiter without sharing counters.
type Backend interface {
	// Limiter returns the limiter enforcing l, built at the first call.
	// Errors are the backend's own for a limit it cannot enforce (the
	// budget backend: any algorithm but the sliding window).
	Limiter(l core.Limit) (core.Limiter, error)
	// Close stops every limiter, flushing what it has not written; later
	// calls to Limiter fail with core.ErrClosed.
	Close(ctx context.Context) error
	// Name is "local", "redis" or "budget".
	Name() string
}

// pool builds and keeps limiters by limit: a lock-free lookup on the hot
// path, a lock only to build. The zero value needs build set.
type pool struct {
	mu       sync.Mutex
	ready    sync.Map // core.Limit -> core.Limiter
	limiters map[core.Limit]core.Limiter
	closed   bool
	build    func(core.Limit) (core.Limiter, error)
	close    func(ctx context.Context, l core.Limiter) error
}

func (p *pool) get(l core.Limit) (core.Limiter, error) {
	if lim, ok := p.ready.Load(l); ok {
		return lim.(core.Limiter), nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, core.ErrClosed
	}
	if lim, ok := p.limiters[l]; ok {
		return lim, nil
	}
	lim, err := p.build(l)
	if err != nil {
		return nil, err
	}
	if p.limiters == nil {
		p.limiters = map[core.Limit]core.Limiter{}
	}
	p.limiters[l] = lim
	p.ready.Store(l, lim)
	return lim, nil
}

// closeAll closes every limiter (p.close, when set) and refuses new ones.
func (p *pool) closeAll(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.ready.Clear()
	var errs []error
	if p.close != nil {
		for _, lim := range p.limiters {
			errs = append(errs, p.close(ctx, lim))
		}
	}
	return errors.Join(errs...)
}
