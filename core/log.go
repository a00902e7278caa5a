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
	cut := sort.Search(len(s.Stamps), func(i int) bool { return s.Stamps[i] > now-window })
	if cut > 0 {
		s.Stamps = append(s.Stamps[:0], s.Stamps[cut:]...)
	}
}

// Decide applies the exact log to n units at now (ms). With commit the n
// stamps are added when they fit; without, only expired stamps are dropped
// (which changes no answer).
func (s *LogState) Decide(l Limit, now, n int64, commit bool) Decision {
	w := l.WindowMillis()
	s.Expire(w, now)
	count := int64(len(s.Stamps))
	d := Decision{Limit: l.Max, Allowed: count+n <= l.Max}
	if d.Allowed && commit {
		s.insert(now, n)
		count += n
	}
	if !d.Allowed {
		oldest := s.Stamps[count+n-l.Max-1]
		d.RetryAfter = ms(maxInt(0, oldest+w-now))
	}
	d.Remaining = maxInt(0, l.Max-count)
	if count > 0 {
		d.ResetAfter = ms(maxInt(0, s.Stamps[count-1]+w-now))
	}
	return d
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
