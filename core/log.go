package core

import "sort"

// LogEntry is one entry of the exact sliding log: At, a time in ms, and N,
// the units admitted at that time (at least 1). The zero value is not a
// valid entry.
type LogEntry struct {
	At int64
	N  int64
}

// LogState is the per-identity state of the exact sliding log: one entry per
// admitted request, requests of the same millisecond sharing one, oldest
// first, and Units, the sum of the entries' N. A request of weight n costs
// one entry, not n, so memory grows with the requests in a window (at most
// Limit.Max entries), not with their weight. Units must equal that sum: a
// state built by hand sets both. The zero value is empty.
type LogState struct {
	Entries []LogEntry
	Units   int64
}

// Expire drops the entries at or before now − window: the log counts the
// half-open interval (now − window, now].
func (s *LogState) Expire(window, now int64) {
	cut := s.expired(window, now)
	if cut == 0 {
		return
	}
	s.Units -= sumUnits(s.Entries[:cut])
	s.Entries = append(s.Entries[:0], s.Entries[cut:]...)
}

// Decide applies the exact log to n units at now (ms). With commit, expired
// entries are dropped and the n units are added when they fit. Without
// commit (a peek) nothing changes: a later peek must not drop entries that a
// request at an earlier time (a clock behind) still counts, exactly as the
// Redis script's peek writes nothing.
func (s *LogState) Decide(l Limit, now, n int64, commit bool) Decision {
	w := l.WindowMillis()
	if commit {
		s.Expire(w, now)
	}
	cut := s.expired(w, now)
	live := s.Entries[cut:]
	count := s.liveUnits(cut)
	d := Decision{Limit: l.Max, Allowed: count+n <= l.Max}
	if d.Allowed && commit {
		s.insert(now, n)
		live = s.Entries
		count += n
	}
	if !d.Allowed {
		d.RetryAfter = ms(maxInt(0, unitAt(live, count+n-l.Max, count, now)+w-now))
	}
	d.Remaining = maxInt(0, l.Max-count)
	if count > 0 && len(live) > 0 {
		d.ResetAfter = ms(maxInt(0, live[len(live)-1].At+w-now))
	}
	return d
}

// expired is how many of the oldest entries lie at or before now − window.
func (s *LogState) expired(window, now int64) int {
	return sort.Search(len(s.Entries), func(i int) bool { return s.Entries[i].At > now-window })
}

// liveUnits is the units of the entries from cut on, summed over the
// shorter side of cut.
func (s *LogState) liveUnits(cut int) int64 {
	if cut <= len(s.Entries)-cut {
		return s.Units - sumUnits(s.Entries[:cut])
	}
	return sumUnits(s.Entries[cut:])
}

// unitAt is the time of the k-th oldest of the units of entries (1-based),
// which sum to units: the entry at which the running sum of N reaches k,
// counted from the nearer end, so the walk is short both for a request
// that needs the oldest units gone and for a heavy one that needs nearly
// all of them gone. k must lie in [1, units]; for a state whose Units
// disagrees with its entries it is the time of the last entry walked, and
// now when there is none.
func unitAt(entries []LogEntry, k, units, now int64) int64 {
	at := now
	if j := units - k + 1; j < k {
		for i := len(entries) - 1; i >= 0; i-- {
			if at = entries[i].At; j-entries[i].N <= 0 {
				break
			}
			j -= entries[i].N
		}
		return at
	}
	for _, e := range entries {
		if at = e.At; k-e.N <= 0 {
			break
		}
		k -= e.N
	}
	return at
}

func sumUnits(entries []LogEntry) int64 {
	var u int64
	for _, e := range entries {
		u += e.N
	}
	return u
}

// insert adds n units at now keeping the entries sorted: to the entry of
// now when now is the newest time at or before now (usually the newest of
// all, so this is an append or an addition), else as a new entry.
func (s *LogState) insert(now, n int64) {
	s.Units += n
	i := sort.Search(len(s.Entries), func(i int) bool { return s.Entries[i].At > now })
	if i > 0 && s.Entries[i-1].At == now {
		s.Entries[i-1].N += n
		return
	}
	s.Entries = append(s.Entries, LogEntry{})
	copy(s.Entries[i+1:], s.Entries[i:])
	s.Entries[i] = LogEntry{At: now, N: n}
}
