package gossip

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/edgelimit/edgelimit/core"
)

// Wire layout of version 1 (all integers are Go varints, "u" unsigned):
//
//	magic 0xE1 | version 0x01 | u len(PoP) PoP | SentAt ms | u WindowMillis |
//	base window | u entry count | entries...
//	entry: u len(Key) Key | u (Window - base) | u Count
const (
	magic   = 0xE1
	Version = 1 // the only version this package writes and reads
)

// Limits enforced by Encode and Decode.
const (
	// MaxSenderLen bounds Message.PoP, the sender's counter id, in bytes:
	// what a message may claim, not what a PoP may be called. A budget
	// limiter's id is its PoP name (at most budget.MaxPoPLen, 64 bytes),
	// '#' and a 16-hex-digit incarnation, 81 bytes at most, within this
	// bound.
	MaxSenderLen    = 96
	MaxMessageBytes = 1 << 20   // a longer payload is refused unread
	MaxCount        = 1 << 53   // counts stay exact in Redis' Lua doubles
	maxWindowDelta  = 1 << 20   // entries of one message span fewer windows
	minEntryBytes   = 1 + 1 + 1 // key length, one key byte, delta, count
)

// Errors returned by Decode and Encode. Each matches core.ErrMalformed (and
// so core.ErrInvalid) with errors.Is.
var (
	ErrTruncated = fmt.Errorf("%w: gossip message truncated", core.ErrMalformed)
	ErrTooLarge  = fmt.Errorf("%w: gossip message too large", core.ErrMalformed)
	ErrVersion   = fmt.Errorf("%w: unknown gossip version", core.ErrMalformed)
	ErrBadField  = fmt.Errorf("%w: gossip field out of range", core.ErrMalformed)
)

// check validates the header fields of m.
func (m *Message) check() error {
	if m.PoP == "" || len(m.PoP) > MaxSenderLen || m.WindowMillis < 1 {
		return ErrBadField
	}
	return nil
}

// checkEntry validates one entry against the message's base window.
func checkEntry(e Entry, base int64) error {
	if core.ValidateKey(e.Key) != nil || e.Count < 1 || e.Count > MaxCount {
		return ErrBadField
	}
	if d := e.Window - base; d < 0 || d >= maxWindowDelta {
		return ErrBadField
	}
	return nil
}

// tooFar reports whether es's windows span maxWindowDelta or more: more
// than one payload's deltas reach.
func tooFar(es []Entry) bool {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, e := range es {
		lo, hi = min(lo, e.Window), max(hi, e.Window)
	}
	return len(es) > 0 && uint64(hi)-uint64(lo) >= maxWindowDelta
}

func appendHeader(b []byte, m *Message, base int64, n int) []byte {
	b = append(b, magic, Version)
	b = binary.AppendUvarint(b, uint64(len(m.PoP)))
	b = append(b, m.PoP...)
	b = binary.AppendVarint(b, m.SentAt.UnixMilli())
	b = binary.AppendUvarint(b, uint64(m.WindowMillis))
	b = binary.AppendVarint(b, base)
	return binary.AppendUvarint(b, uint64(n))
}

func appendEntry(b []byte, e Entry, base int64) []byte {
	b = binary.AppendUvarint(b, uint64(len(e.Key)))
	b = append(b, e.Key...)
	b = binary.AppendUvarint(b, uint64(e.Window-base))
	return binary.AppendUvarint(b, uint64(e.Count))
}

// Marshal encodes m as one payload. It returns ErrBadField for an invalid
// header or entry or entries whose windows span 2^20 or more, and ErrTooLarge when the payload would exceed
// MaxMessageBytes; use Encode to split big batches.
func Marshal(m Message) ([]byte, error) {
	if len(m.Entries) == 0 {
		if err := m.check(); err != nil {
			return nil, err
		}
		return appendHeader(nil, &m, 0, 0), nil
	}
	if tooFar(m.Entries) {
		return nil, ErrBadField
	}
	out, err := Encode(m, MaxMessageBytes)
	if err != nil {
		return nil, err
	}
	if len(out) != 1 {
		return nil, ErrTooLarge
	}
	return out[0], nil
}
