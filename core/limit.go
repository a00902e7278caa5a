package core

import (
	"fmt"
	"strconv"
	"time"
)

// Algorithm names a rate-limiting algorithm. The zero value is SlidingWindow.
type Algorithm uint8

const (
	// SlidingWindow is Cloudflare's sliding window counter: two counters, the
	// current and the previous window, and
	// estimate = cur + prev × (1 − elapsed/window). Tens of bytes per
	// identity, approximate at the edges. The default.
	SlidingWindow Algorithm = iota
	// FixedWindow counts per window number; a client may pass 2× the limit
	// across a window boundary.
	FixedWindow
	// SlidingLog keeps one entry (time, weight) per admitted request: exact,
	// but memory grows with the requests in a window (at most Max entries),
	// though not with their weight.
	SlidingLog
	// TokenBucket is a token bucket of capacity Max refilled one unit
	// every Window/Max, computed as GCRA on one timestamp (BucketState):
	// bursts up to Max, then a steady rate of exactly Max per Window.
	TokenBucket
)

var algorithmNames = [...]string{"sliding", "fixed", "log", "bucket"}

// Algorithms lists every algorithm, in declaration order.
var Algorithms = []Algorithm{SlidingWindow, FixedWindow, SlidingLog, TokenBucket}

// String returns the short name: "sliding", "fixed", "log" or "bucket".
func (a Algorithm) String() string {
	if int(a) < len(algorithmNames) {
		return algorithmNames[a]
	}
	return fmt.Sprintf("Algorithm(%d)", uint8(a))
}

// ParseAlgorithm is the inverse of String; unknown names give ErrBadAlgorithm.
func ParseAlgorithm(s string) (Algorithm, error) {
	for i, n := range algorithmNames {
		if n == s {
			return Algorithm(i), nil
		}
	}
	return 0, fmt.Errorf("%w: %q", ErrBadAlgorithm, s)
}

// Limit is a rate-limiting policy: at most Max units per Window, counted by
// Algorithm. The zero value is invalid (Max and Window must be positive).
type Limit struct {
	Max       int64         // units admitted per window; must be > 0
	Window    time.Duration // a whole number of milliseconds, at least 1ms
	Algorithm Algorithm     // zero value: SlidingWindow
}

// PerWindow is shorthand for Limit{Max: max, Window: window} with the default
// algorithm.
func PerWindow(max int64, window time.Duration) Limit {
	return Limit{Max: max, Window: window}
}

// MaxLimit is the largest Max a Limit may have, 2^50: the Redis scripts
// count in Lua numbers (float64, exact integers below 2^53), and a count
// plus a weight reaches twice Max before it is refused.
const MaxLimit = 1 << 50

// MaxWindow is the longest Window a Limit may have. Durations computed
// from a window reach twice it (a sliding window's ResetAfter) and must fit
// a time.Duration (292 years); a token bucket's TAT, in µs, runs a window
// ahead of now and must stay exact in the Lua scripts (below 2^53 µs, the
// year 2255).
const MaxWindow = 100 * 365 * 24 * time.Hour

// Validate returns ErrBadLimit, ErrBadWindow or ErrBadAlgorithm when the
// limit cannot be enforced, and nil otherwise: Max must lie in
// [1, MaxLimit] and Window in [1ms, MaxWindow], a whole number of
// milliseconds (every limiter keeps time in ms: a window of 1.5 ms would
// be enforced as 1 ms, and share its keys). A token bucket also needs
// Window/Max of at least one microsecond.
func (l Limit) Validate() error {
	switch {
	case l.Max <= 0 || l.Max > MaxLimit:
		return ErrBadLimit
	case l.Window < time.Millisecond || l.Window > MaxWindow || l.Window%time.Millisecond != 0:
		return ErrBadWindow
	case int(l.Algorithm) >= len(algorithmNames):
		return ErrBadAlgorithm
	case l.Algorithm == TokenBucket && l.WindowMillis()*1000 < l.Max:
		return ErrBadLimit
	}
	return nil
}

// CheckWeight returns ErrBadWeight unless 1 <= n <= l.Max. A weight above the
// limit could never pass, so it is refused as bad input rather than denied.
func (l Limit) CheckWeight(n int64) error {
	if n < 1 || n > l.Max {
		return ErrBadWeight
	}
	return nil
}

// WindowMillis is the window in whole milliseconds.
func (l Limit) WindowMillis() int64 { return l.Window.Milliseconds() }

// KeyText renders Max and the window as the Redis keys of a limit carry
// them: Max in decimal, '/', and the window in the largest of d, h, m and
// s that divides it, else in ms — "10/1s", "1000/1h", "7/1500ms". Each
// window has one spelling and distinct windows distinct ones, so limits
// differing in Max or window never share a text; it holds no brace, colon
// or space. The algorithm is not in it.
func (l Limit) KeyText() string {
	b := make([]byte, 0, 24)
	b = strconv.AppendInt(b, l.Max, 10)
	b = append(b, '/')
	w := l.WindowMillis()
	for _, u := range windowUnits {
		if w%u.ms == 0 {
			return string(append(strconv.AppendInt(b, w/u.ms, 10), u.name...))
		}
	}
	return string(append(strconv.AppendInt(b, w, 10), "ms"...))
}

// windowUnits are the units KeyText writes a window in, largest first.
var windowUnits = [...]struct {
	ms   int64
	name string
}{{86_400_000, "d"}, {3_600_000, "h"}, {60_000, "m"}, {1000, "s"}}

// String renders the limit as "100/1m0s sliding".
func (l Limit) String() string {
	return fmt.Sprintf("%d/%s %s", l.Max, l.Window, l.Algorithm)
}
