package core

import "time"

// MaxKeyLen is the longest identity key accepted, in bytes. Longer keys are
// rejected with ErrKeyTooLong rather than truncated, because truncation would
// make distinct identities share a counter.
const MaxKeyLen = 512

// ValidateKey returns ErrEmptyKey or ErrKeyTooLong for keys that cannot be an
// identity, and nil otherwise. Any bytes are allowed: colons, braces, spaces,
// NUL, invalid UTF-8. Backends encode keys so distinct identities never share
// storage.
func ValidateKey(key string) error {
	if key == "" {
		return ErrEmptyKey
	}
	if len(key) > MaxKeyLen {
		return ErrKeyTooLong
	}
	return nil
}

// CheckTime returns ErrBadTime for a request time before the Unix epoch
// (time.Time{}, an unset field, is one) or past MaxMillis (the year 2155),
// and nil otherwise. Limiters keep time as milliseconds since the epoch:
// before it, windows and expiries are negative numbers no real request
// has, and a zero time read as a real one was denied for about two
// thousand years; past MaxMillis a token bucket's TAT, up to a window
// ahead, is no longer exact in the Redis scripts' numbers.
func CheckTime(t time.Time) error { return CheckMillis(t.UnixMilli()) }

// MaxMillis is the latest request time accepted, in ms since the Unix
// epoch: a token bucket's TAT, in µs, runs up to MaxWindow ahead of now
// and must stay below 2^53 µs, the largest integer the Redis scripts'
// numbers (float64) hold exactly. It is in the year 2155.
const MaxMillis = (1<<53 - int64(MaxWindow/time.Microsecond)) / 1000

// CheckMillis is CheckTime for a time read as ms since the Unix epoch (a
// core.MilliClock's): ErrBadTime when ms is negative or past MaxMillis,
// else nil.
func CheckMillis(ms int64) error {
	if ms < 0 || ms > MaxMillis {
		return ErrBadTime
	}
	return nil
}
