package core

import "sort"

// LogState is the per-identity state of the exact sliding log: one timestamp
// (ms) per admitted unit, oldest first. At most Limit.Max stamps are kept, so
// memory grows with the limit, not with traffic. The zero value is empty.
type LogState struct {
	Stamps []int64
}

// Expire drops the stamps at or before now − window: the log counts the
// half-open interval (now − window, now].
func (s *LogState) Expire(window, now int64) {
	if cut := s.expired(window, now); cut > 0 {
		s.Stamps = append(s.Stamps[:0], s.Stamps[cut:]...)
	}
}

// Decide applies the exact log to n units at now (ms). With commit, expired
// stamps are dropped and the n stamps are added when they fit. Without
// commit (a peek) nothing changes: a later peek must not drop stamps that a
// request at an earlier time (a clock behind) still counts, exactly as the
// Redis script's peek writes nothing.
func (s *LogState) Decide(l Limit, now, n int64, commit bool) Decision {
	w := l.WindowMillis()
	if commit {
		s.Expire(w, now)
	}
	live := s.Stamps[s.expired(w, now):]
	count := int64(len(live))
	d := Decision{Limit: l.Max, Allowed: count+n <= l.Max}
	if d.Allowed && commit {
		s.insert(now, n)
		live = s.Stamps
		count += n
	}
	if !d.Allowed {
		oldest := live[count+n-l.Max-1]
		d.RetryAfter = ms(maxInt(0, oldest+w-now))
	}
	d.Remaining = maxInt(0, l.Max-count)
	if count > 0 {
		d.ResetAfter = ms(maxInt(0, live[count-1]+w-now))
	}
	return d
}

// expired is how many of the oldest stamps lie at or before now − window.
func (s *LogState) expired(window, now int64) int {
	return sort.Search(len(s.Stamps), func(i int) bool { return s.Stamps[i] > now-window })
}

// insert adds n stamps at now keeping the slice sorted (now is usually the
// newest, so this is an append).
func (s *LogState) insert(now, n int64) {
	i := sort.Search(len(s.Stamps), func(i int) bool { return s.Stamps[i] > now })
	for k := int64(0); k < n; k++ {
		s.Stamps = append(s.Stamps, 0)
	}
	copy(s.Stamps[i+int(n):], s.Stamps[i:])
	for k := 0; k < int(n); k++ {
		s.Stamps[i+k] = now
	}
}
