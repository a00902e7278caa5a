package gossip

// headerSlack bounds a version 1 header's size beyond the PoP bytes.
const headerSlack = 2 + 4*binaryMaxVarint

const binaryMaxVarint = 10

// Encode packs m into as few payloads as possible, each at most maxBytes
// long (clamped to 1 KiB..MaxMessageBytes), all with m's header. An empty
// Entries gives no payload. Errors: ErrBadField for an invalid header or
// entry.
func Encode(m Message, maxBytes int) ([][]byte, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	maxBytes = min(max(maxBytes, 1024), MaxMessageBytes)
	base := baseWindow(m.Entries)
	var out [][]byte
	for start := 0; start < len(m.Entries); {
		end, err := fit(m.Entries, start, base, maxBytes-headerSlack-len(m.PoP))
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
// encoding fits in room bytes (always at least one entry).
func fit(es []Entry, start int, base int64, room int) (int, error) {
	used := 0
	for i := start; i < len(es); i++ {
		if err := checkEntry(es[i], base); err != nil {
			return 0, err
		}
		used += len(es[i].Key) + 3*binaryMaxVarint
		if used > room && i > start {
			return i, nil
		}
	}
	return len(es), nil
}
