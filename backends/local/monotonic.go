package local

import (
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// Monotonic is a source of elapsed time that is never stepped, by which the
// Limiter ages every identity's state as Redis ages a key by its TTL: a
// state whose last write is older, in this time, than its lifetime plus
// the expiry slack is forgotten, whatever the requests' stamps say (see
// the package doc, "A clock put back").
//
// A clock given to WithClock that implements Monotonic is used as the
// source unless WithMonotonic gives another; otherwise the source is Go's
// monotonic clock (time.Since of the instant New ran), read on every
// decision. *core.CoarseClock implements it with the reading its goroutine
// stores, so with one a decision reads no clock; a reading that lags by up
// to the clock's resolution may forget a state that much before its time
// to live, well within the second of slack.
type Monotonic interface {
	// MonotonicMillis returns the milliseconds elapsed since an origin of
	// the source's choosing. Readings must not decrease and must advance
	// at the rate of real time: a source that runs slow, or goes back,
	// keeps states longer (the stamps alone then decide, as they always
	// may), and one that runs fast forgets them early.
	MonotonicMillis() int64
}

// WithMonotonic sets the source of elapsed time that states are aged by
// (default: the clock of WithClock when it implements Monotonic, else Go's
// monotonic clock). A simulator or test playing virtual time gives one that
// follows its virtual true time. A nil source is an error matching
// core.ErrInvalid.
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
// else the clock's when it implements Monotonic, else Go's monotonic clock
// from now.
func monotonicOf(cfg config) Monotonic {
	if cfg.mono != nil {
		return cfg.mono
	}
	if m, ok := cfg.clock.(Monotonic); ok {
		return m
	}
	return goMonotonic{start: time.Now()}
}

// goMonotonic reads Go's monotonic clock: the time since start, which
// carries a monotonic reading, so a step of the wall clock changes
// nothing. Its zero value is not usable.
type goMonotonic struct{ start time.Time }

// MonotonicMillis implements Monotonic.
func (g goMonotonic) MonotonicMillis() int64 { return int64(time.Since(g.start) / time.Millisecond) }
