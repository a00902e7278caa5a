package gossip

import (
	"encoding/binary"
	"math"
	"time"
)

// reader is a bounds-checked cursor over a payload; the first failure sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint(maxV uint64) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = ErrTruncated
		if n < 0 {
			r.err = ErrBadField
		}
		return 0
	}
	r.b = r.b[n:]
	if v > maxV {
		r.err = ErrBadField
		return 0
	}
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = ErrTruncated
		if n < 0 {
			r.err = ErrBadField
		}
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n uint64) string {
	if r.err != nil {
		return ""
	}
	if uint64(len(r.b)) < n {
		r.err = ErrTruncated
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// Decode parses one payload. It never panics and never returns a partial
// message: any defect gives a zero Message and an error matching
// core.ErrMalformed — ErrTooLarge (over MaxMessageBytes), ErrVersion
// (unknown magic or version), ErrTruncated, or ErrBadField (a value out of
// range, a window past the largest int64, a zero count, an empty or
// oversized key, trailing bytes).
func Decode(b []byte) (Message, error) {
	if len(b) > MaxMessageBytes {
		return Message{}, ErrTooLarge
	}
	if len(b) < 2 {
		return Message{}, ErrTruncated
	}
	if b[0] != magic || b[1] != Version {
		return Message{}, ErrVersion
	}
	r := &reader{b: b[2:]}
	m, base, n := decodeHeader(r)
	if r.err == nil && n > uint64(len(r.b)/minEntryBytes) {
		r.err = ErrTruncated
	}
	if r.err != nil {
		return Message{}, r.err
	}
	m.Entries = make([]Entry, 0, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		m.Entries = append(m.Entries, decodeEntry(r, base))
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = ErrBadField
	}
	if r.err != nil {
		return Message{}, r.err
	}
	return m, nil
}

func decodeHeader(r *reader) (m Message, base int64, n uint64) {
	pl := r.uvarint(MaxSenderLen)
	m.PoP = r.bytes(pl)
	m.SentAt = time.UnixMilli(r.varint())
	m.WindowMillis = int64(r.uvarint(1 << 62))
	base = r.varint()
	n = r.uvarint(MaxMessageBytes)
	if r.err == nil && m.check() != nil {
		r.err = ErrBadField
	}
	return m, base, n
}

func decodeEntry(r *reader, base int64) Entry {
	kl := r.uvarint(1 << 16)
	e := Entry{Key: r.bytes(kl)}
	d := r.uvarint(maxWindowDelta - 1)
	if r.err == nil && base > math.MaxInt64-int64(d) {
		r.err = ErrBadField // base + d would wrap past the largest window
	}
	e.Window = base + int64(d)
	e.Count = int64(r.uvarint(MaxCount))
	if r.err == nil && checkEntry(e, base) != nil {
		r.err = ErrBadField
	}
	return e
}
