package local

import (
	"math"

	"github.com/edgelimit/edgelimit/core"
)

// expirySlackMillis is how long past its lifetime a state is kept, in
// monotonic time since its last write, and how far before an inserting
// request's stamp an entry must have fully reset to be swept by the stamps:
// requests are stamped before they take the shard lock, so one stamped a
// little earlier than the last (another goroutine's) may still need the
// state. It is the Redis backend's default expiry slack (its default
// timeout, one second).
const expirySlackMillis = 1000

// noExpiry is the expiry of a state whose lifetime outlasts what a slot's
// 32-bit count of seconds holds (136 years): it is never forgotten by
// monotonic time, only by its stamps.
const noExpiry = math.MaxUint32

// lifetimeMillis is the longest a state written at a stamp matters to
// requests at that stamp or later, as the Redis scripts cap a key's TTL:
// two windows for the sliding window, one for the fixed window and the log
// (the newest stamp plus the window), and one for the bucket (a burst of at
// most Max units at Max per window).
func lifetimeMillis(l core.Limit) int64 {
	if l.Algorithm == core.SlidingWindow {
		return 2 * l.WindowMillis()
	}
	return l.WindowMillis()
}

// seconds is the whole seconds of ms, monotonic milliseconds since the
// Limiter's origin (never negative), in a slot's unit, saturating below
// noExpiry.
func seconds(ms int64) uint32 {
	if s := ms / 1000; s < noExpiry {
		return uint32(s)
	}
	return noExpiry - 1
}

// expiryAfter returns the expiry of a state written by decision d at
// monotonic ms: the first whole second of monotonic time at which it is
// forgotten. That is strictly more than its time to live after the write
// (so it outlives Redis' key by up to a second, never less) where the time
// to live, as the Redis scripts set a key's TTL, is the time until no
// request at the write's stamp or later can be counted in the state
// (d.ResetAfter, at least 1 ms), capped at the lifetime — a write stamped
// behind the state (a clock put back) does not stretch it by the lag — plus
// expirySlackMillis.
func (st *store[V]) expiryAfter(d core.Decision, ms int64) uint32 {
	ttl := min(max(d.ResetAfter.Milliseconds(), 1), st.lifetime) + expirySlackMillis
	if e := (ms+ttl)/1000 + 1; e < noExpiry {
		return uint32(e)
	}
	return noExpiry
}

// expired reports whether s was forgotten by monotonic ms: its expiry's
// second has begun.
func expired[V any](s *slot[V], ms int64) bool { return seconds(ms) >= s.expiry }
