package service

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// Pool defaults (PoolOptions' zero values).
const (
	// DefaultIdle is how long a limiter outside the configuration stays
	// unused before it is released.
	DefaultIdle = 5 * time.Minute
	// DefaultMaxLimiters is the most limiters kept outside the
	// configuration.
	DefaultMaxLimiters = 256
	// DefaultCloseTimeout bounds the close of a released limiter (a
	// budget limiter's last Sync); it is also the server's default bound
	// on closing the backend at a stop (server.DefaultCloseTimeout).
	DefaultCloseTimeout = 5 * time.Second
)

// PoolOptions bound the limiters a backend keeps besides those of the
// configuration in force (Backend.Keep), which stay until Close: those of
// descriptors' limit overrides, which requests choose, and those of limits
// a reload dropped. The zero value: DefaultIdle, DefaultMaxLimiters.
//
// Such a limiter is released (closed: a budget limiter stops its Sync loop
// after a last Sync) once unused for Idle by the backend's clock, found at
// a look for idle limiters, made at most every Idle/4 by a request or by
// Sweep (Sweeper, which the server calls on a timer, so a server without
// requests releases them too), and a local backend's only once its
// counts have expired too (unused for twice its window). Past Max, building
// another releases the least recently used one that no request is using;
// when every one is in use the new limiter is built all the same, and the
// excess released as soon as requests let go of them, so the excess is at
// most the requests in flight. A request after a release gets a fresh
// limiter: the redis and budget backends' counts are at Redis, by limit,
// and nothing is lost; a local limiter released past Max loses its counts.
// A released limiter is closed outside the request path, within
// CloseTimeout of its own (only the budget backend's limiters have
// anything to close: a last Sync, which returns unused grants to Redis;
// one that runs out of time leaves its grants to expire with their
// window). The command sets CloseTimeout from -close-timeout, which also
// bounds the backend's Close at a stop (server.Options.CloseTimeout), so
// a limiter gets the same time for its last Sync whether it is released
// or closed with the backend.
// A negative Idle, Max or CloseTimeout fails the backend's first Acquire
// with an error matching core.ErrInvalid.
type PoolOptions struct {
	Idle         time.Duration // unused this long: released; 0 = DefaultIdle
	Max          int           // most limiters outside the configuration; 0 = DefaultMaxLimiters
	CloseTimeout time.Duration // bound on a released limiter's close; 0 = DefaultCloseTimeout
}

// PoolStats counts a backend's limiters. The zero value is an empty pool.
type PoolStats struct {
	Live     int    // limiters held, kept or not
	Kept     int    // of them, the configuration's (Backend.Keep)
	Released uint64 // limiters released since the backend was built
}

// pool builds limiters by limit and releases those outside the kept set
// (PoolOptions): a lock-free lookup and a reference count on the hot path,
// a lock to build and to release. Released limiters are closed on a
// goroutine of their own, outside the lock. The zero value needs build
// set.
type pool struct {
	build func(core.Limit) (core.Limiter, error)
	close func(ctx context.Context, l core.Limiter) error // nil: nothing to close
	// released, when set, is called under the pool's lock with every
	// limiter released, before a fresh one of the same limit may be built.
	released func(core.Limit, core.Limiter)
	// minIdle, when set, is the least a limit's limiter stays unused
	// before it is released for idleness.
	minIdle func(core.Limit) time.Duration
	clock   core.Clock // nil = the system clock
	opts    PoolOptions

	ready     sync.Map // core.Limit -> *entry
	mu        sync.Mutex
	entries   map[core.Limit]*entry
	kept      map[core.Limit]bool
	closed    bool
	lastSweep atomic.Int64 // clock's unix nanos of the last sweep
	nreleased atomic.Uint64
	closing   sync.WaitGroup // closes of released limiters under way
}

// errBadPool is the error of negative PoolOptions.
func errBadPool(o PoolOptions) error {
	return fmt.Errorf("%w: pool options Idle %v, Max %d, CloseTimeout %v: want ≥ 0", core.ErrInvalid, o.Idle, o.Max, o.CloseTimeout)
}

// entry is one limiter and its use.
type entry struct {
	limit core.Limit
	lim   core.Limiter
	// refs counts the requests using lim; -1 once released, after which
	// nobody acquires it.
	refs atomic.Int64
	used atomic.Int64 // clock's unix nanos of the last Acquire
	done func()       // refs.Add(-1), built once
}

// acquire takes a reference unless e was released.
func (e *entry) acquire(now int64) bool {
	for {
		r := e.refs.Load()
		if r < 0 {
			return false
		}
		if e.refs.CompareAndSwap(r, r+1) {
			if e.used.Load() < now {
				e.used.Store(now)
			}
			return true
		}
	}
}

func (p *pool) now() int64 {
	if p.clock == nil {
		return time.Now().UnixNano()
	}
	return p.clock.Now().UnixNano()
}

func (p *pool) idle() time.Duration {
	if p.opts.Idle == 0 {
		return DefaultIdle
	}
	return p.opts.Idle
}

// closeTimeout bounds the close of each released limiter.
func (p *pool) closeTimeout() time.Duration {
	if p.opts.CloseTimeout == 0 {
		return DefaultCloseTimeout
	}
	return p.opts.CloseTimeout
}

func (p *pool) max() int {
	if p.opts.Max == 0 {
		return DefaultMaxLimiters
	}
	return p.opts.Max
}

// get acquires the limiter of l (Backend.Acquire).
func (p *pool) get(l core.Limit) (core.Limiter, func(), error) {
	now := p.now()
	if v, ok := p.ready.Load(l); ok {
		if e := v.(*entry); e.acquire(now) {
			p.maybeSweep(now)
			return e.lim, e.done, nil
		}
		// released meanwhile: a fresh one is built below
	}
	if p.opts.Idle < 0 || p.opts.Max < 0 || p.opts.CloseTimeout < 0 {
		return nil, nil, errBadPool(p.opts)
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, nil, core.ErrClosed
	}
	if e, ok := p.entries[l]; ok && e.acquire(now) {
		p.mu.Unlock()
		return e.lim, e.done, nil
	}
	lim, err := p.build(l)
	if err != nil {
		p.mu.Unlock()
		return nil, nil, err
	}
	e := &entry{limit: l, lim: lim}
	e.done = func() { e.refs.Add(-1) }
	e.refs.Store(1)
	e.used.Store(now)
	if p.entries == nil {
		p.entries = map[core.Limit]*entry{}
	}
	p.entries[l] = e
	p.ready.Store(l, e)
	gone := p.pending(p.trim(now, p.sweepDue(now)))
	p.mu.Unlock()
	p.closeAsync(gone)
	return lim, e.done, nil
}

// sweepDue tells whether the last look for idle limiters is Idle/4 old,
// and if so takes the next look for the caller.
func (p *pool) sweepDue(now int64) bool {
	last := p.lastSweep.Load()
	return now-last >= int64(p.idle()/4) && p.lastSweep.CompareAndSwap(last, now)
}

// sweep is Sweeper.Sweep: a look for idle limiters by the pool's clock,
// when one is due, with or without requests.
func (p *pool) sweep() { p.maybeSweep(p.now()) }

// maybeSweep releases idle limiters when a look is due (sweepDue).
func (p *pool) maybeSweep(now int64) {
	if !p.sweepDue(now) {
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	gone := p.pending(p.trim(now, true))
	p.mu.Unlock()
	p.closeAsync(gone)
}

// trim releases, among the limiters not kept and not in use, those idle
// long enough (when idle is set) and then the least recently used while
// more than Max remain; p.mu must be held.
func (p *pool) trim(now int64, idle bool) []*entry {
	var gone []*entry
	free := 0 // limiters not kept
	for l, e := range p.entries {
		if p.kept[l] {
			continue
		}
		free++
		if idle && now-e.used.Load() >= int64(p.idleFor(l)) && p.release(e) {
			gone = append(gone, e)
			free--
		}
	}
	for free > p.max() {
		var lru *entry
		for l, e := range p.entries {
			if !p.kept[l] && e.refs.Load() == 0 && (lru == nil || e.used.Load() < lru.used.Load()) {
				lru = e
			}
		}
		if lru == nil || !p.release(lru) {
			break // every one in use: trimmed at a later build or sweep
		}
		gone = append(gone, lru)
		free--
	}
	return gone
}

// idleFor is how long l's limiter stays unused before it is released.
func (p *pool) idleFor(l core.Limit) time.Duration {
	d := p.idle()
	if p.minIdle != nil {
		d = max(d, p.minIdle(l))
	}
	return d
}

// release takes e out of the pool unless a request uses it; p.mu must be
// held.
func (p *pool) release(e *entry) bool {
	if !e.refs.CompareAndSwap(0, -1) {
		return false
	}
	delete(p.entries, e.limit)
	p.ready.Delete(e.limit)
	p.nreleased.Add(1)
	if p.released != nil {
		p.released(e.limit, e.lim)
	}
	return true
}

// pending counts the close of gone, for closeAll to wait on; p.mu must
// be held, so closeAll, which takes it first, sees every close.
func (p *pool) pending(gone []*entry) []*entry {
	if len(gone) == 0 || p.close == nil {
		return nil
	}
	p.closing.Add(1)
	return gone
}

// closeAsync closes released limiters (counted by pending) on a
// goroutine, outside p.mu, one after another, each within closeTimeout.
func (p *pool) closeAsync(gone []*entry) {
	if len(gone) == 0 {
		return
	}
	go func() {
		defer p.closing.Done()
		for _, e := range gone {
			ctx, cancel := context.WithTimeout(context.Background(), p.closeTimeout())
			_ = p.close(ctx, e.lim) // a failed last Sync: the grants expire with their window
			cancel()
		}
	}()
}

// keep replaces the kept set (Backend.Keep).
func (p *pool) keep(limits []core.Limit) {
	kept := make(map[core.Limit]bool, len(limits))
	for _, l := range limits {
		kept[l] = true
	}
	p.mu.Lock()
	p.kept = kept
	p.mu.Unlock()
}

// stats counts the pool (Backend.Pool).
func (p *pool) stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := PoolStats{Live: len(p.entries), Released: p.nreleased.Load()}
	for l := range p.entries {
		if p.kept[l] {
			s.Kept++
		}
	}
	return s
}

// closeAll waits for the closes of released limiters while ctx lives
// (each has PoolOptions.CloseTimeout of its own and goes on after),
// closes every limiter (p.close, when set) and refuses new ones.
func (p *pool) closeAll(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	p.ready.Clear()
	entries := p.entries
	p.entries = nil
	p.mu.Unlock()
	released := make(chan struct{})
	go func() { p.closing.Wait(); close(released) }()
	select {
	case <-released:
	case <-ctx.Done():
	}
	var errs []error
	if p.close != nil {
		for _, e := range entries {
			errs = append(errs, p.close(ctx, e.lim))
		}
	}
	return errors.Join(errs...)
}
