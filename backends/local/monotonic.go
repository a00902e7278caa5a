package local

import (
	"fmt"

	"github.com/edgelimit/edgelimit/core"
)

// Monotonic is a source of elapsed time that is never stepped, by which the
// Limiter ages every identity's state as Redis ages a key by its TTL: a
// state whose last write is older, in this time, than its lifetime plus
// the expiry slack is forgotten, whatever the requests' stamps say (see
// the package doc, "A clock put back").
//
// The source is WithMonotonic's, else the clock given to WithClock when it
// implements Monotonic: core.SystemClock (the default; Go's monotonic
// clock, read once with the stamp on Allow) and *core.CoarseClock (the
// reading its goroutine stores, so a decision reads no clock; it may lag
// by up to the clock's resolution and forget a state that much before its
// time to live, well within the second of slack) do. A clock that does not
// (core.ManualClock, a test's or a simulator's own) ages states by its
// stamps alone, as the Limiter's only time: a limiter driven by an
// injected clock never reads real time behind it.
type Monotonic interface {
	// MonotonicMillis returns the milliseconds elapsed since an origin of
	// the source's choosing. Readings must not decrease and must advance
	// at the rate of real time: a source that runs slow, or goes back,
	// keeps states longer (the stamps alone then decide, as they always
	// may), and one that runs fast forgets them early.
	MonotonicMillis() int64
}

// WithMonotonic sets the source of elapsed time that states are aged by
// (default: the clock of WithClock when it implements Monotonic, else
// none: stamps alone). A simulator or test playing virtual time, or a
// clock of the caller's own that can be stepped, gives one that follows
// true time. A nil source is an error matching core.ErrInvalid.
func WithMonotonic(m Monotonic) Option {
	return func(c *config) error {
		if m == nil {
			return fmt.Errorf("%w: nil monotonic source", core.ErrInvalid)
		}
		c.mono = m
		return nil
	}
}

// monotonicOf returns the source cfg gives states' age by: WithMonotonic's,
// else the clock's when it implements Monotonic, else a frozen one (states
// age by their stamps alone).
func monotonicOf(cfg config) Monotonic {
	if cfg.mono != nil {
		return cfg.mono
	}
	if m, ok := cfg.clock.(Monotonic); ok {
		return m
	}
	return frozen{}
}

// frozen is a Monotonic that never advances: no state expires by it.
type frozen struct{}

// MonotonicMillis implements Monotonic: always 0.
func (frozen) MonotonicMillis() int64 { return 0 }
