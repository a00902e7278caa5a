package truth

import "time"

// stamp is one admission in an identity's log: n units at t (ms).
type stamp struct{ t, n int64 }

// history is one identity's admissions still inside the window, oldest
// first from head on, their total, the most units ever seen in one window,
// and whether it made a decision.
type history struct {
	log   []stamp
	head  int
	units int64
	peak  int64
	seen  bool
}

// expire drops admissions at or before t − window: it moves head past
// them, and moves the live ones to the front only when they are at most
// half the slice, so each admission is moved O(1) times on average.
func (h *history) expire(t, window int64) {
	i := h.head
	for i < len(h.log) && h.log[i].t <= t-window {
		h.units -= h.log[i].n
		i++
	}
	if h.head = i; h.head > len(h.log)/2 {
		h.log = append(h.log[:0], h.log[h.head:]...)
		h.head = 0
	}
}

// observe judges one decision on n units at t against the log, records
// it when allowed, and returns whether the log said to allow and, when
// allowed, how many of its units took the window past the limit.
func (h *history) observe(t, n, limit, window int64, allowed bool) (right bool, beyond int64) {
	h.seen = true
	h.expire(t, window)
	right = h.units < limit-n+1
	if allowed {
		beyond = min(n, max(0, h.units+n-limit))
		h.log = append(h.log, stamp{t, n})
		h.units += n
		h.peak = max(h.peak, h.units)
	}
	return right, beyond
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
	right, _ = h.observe(t, n, j.limit, j.window, allowed)
	j.tally.count(allowed, right, n)
	return right
}
