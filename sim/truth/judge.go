package truth

import "time"

// stamp is one admission in an identity's log: n units at t (ms).
type stamp struct{ t, n int64 }

// history is one identity's admissions still inside the window, oldest
// first, their total, and the most units ever seen in one window.
type history struct {
	log   []stamp
	units int64
	peak  int64
}

// expire drops admissions at or before t − window.
func (h *history) expire(t, window int64) {
	i := 0
	for i < len(h.log) && h.log[i].t <= t-window {
		h.units -= h.log[i].n
		i++
	}
	if i > 0 {
		h.log = append(h.log[:0], h.log[i:]...)
	}
}

// Judge scores decisions against the exact admitted log. Feed it every
// decision in non-decreasing time order (ties in the order they were made).
// The zero value is not usable; see New. A Judge is not safe for concurrent
// use.
type Judge[K comparable] struct {
	limit  int64
	window int64
	ids    map[K]*history
	tally  Tally
}

// New returns a Judge for limit units per window (used at millisecond
// resolution, like the limiters).
func New[K comparable](limit int64, window time.Duration) *Judge[K] {
	return &Judge[K]{limit: limit, window: window.Milliseconds(), ids: make(map[K]*history)}
}

// Observe records one decision on n units of k at t (ms since the epoch),
// and whether it was allowed. It returns whether the exact log said to allow.
func (j *Judge[K]) Observe(k K, t, n int64, allowed bool) (right bool) {
	h := j.ids[k]
	if h == nil {
		h = &history{}
		j.ids[k] = h
	}
	h.expire(t, j.window)
	right = h.units < j.limit-n+1
	j.tally.count(allowed, right, n)
	if allowed {
		h.log = append(h.log, stamp{t, n})
		h.units += n
		h.peak = max(h.peak, h.units)
	}
	return right
}
