package gossip

// headerSlack bounds a version 1 header's size beyond the PoP bytes.
const headerSlack = 2 + 4*binaryMaxVarint

const binaryMaxVarint = 10

// Encode packs m's entries, in order, into payloads each at most maxBytes
// long (clamped to 1 KiB..MaxMessageBytes), all with m's header; a
// payload holds as many entries as fit, up to one whose window would make
// the payload's span 2^20 windows or more (a payload's windows are
// deltas from its least), so entries of windows far apart go in payloads
// of their own. An empty Entries gives no payload. Errors: ErrBadField
// for an invalid header or entry.
func Encode(m Message, maxBytes int) ([][]byte, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	maxBytes = min(max(maxBytes, 1024), MaxMessageBytes)
	var out [][]byte
	for start := 0; start < len(m.Entries); {
		end, base, err := fit(m.Entries, start, maxBytes-headerSlack-len(m.PoP))
		if err != nil {
			return nil, err
		}
		b := appendHeader(make([]byte, 0, maxBytes), &m, base, end-start)
		for _, e := range m.Entries[start:end] {
			b = appendEntry(b, e, base)
		}
		out = append(out, b)
		start = end
	}
	return out, nil
}

// fit returns the end of the longest run of entries from start whose
// encoding fits in room bytes and whose windows span fewer than
// maxWindowDelta (always at least one entry), and the run's least window,
// its base.
func fit(es []Entry, start int, room int) (end int, base int64, err error) {
	lo, hi := es[start].Window, es[start].Window
	used := 0
	for i := start; i < len(es); i++ {
		w := es[i].Window
		nlo, nhi := min(lo, w), max(hi, w)
		used += len(es[i].Key) + 3*binaryMaxVarint
		if i > start && (used > room || uint64(nhi)-uint64(nlo) >= maxWindowDelta) {
			return i, lo, nil
		}
		if err := checkEntry(es[i], w); err != nil {
			return 0, 0, err
		}
		lo, hi = nlo, nhi
	}
	return len(es), lo, nil
}
