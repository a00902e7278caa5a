package core

// MilliClock is a Clock that also tells the time as Unix milliseconds, the
// unit of every limiter's math, without building a time.Time. UnixMilli
// must equal Millis(Now()) read at the same instant. SystemClock,
// *ManualClock and *CoarseClock implement it.
//
// Beware embedding: a type that embeds one of them and overrides Now (to add
// an offset, say) still has the embedded UnixMilli, which then disagrees
// with its Now. MilliClockOf catches a constant disagreement at
// construction; a clock whose Now drifts from its UnixMilli later breaks
// the contract, and limiters will read UnixMilli.
type MilliClock interface {
	Clock
	UnixMilli() int64
}

// MilliClockOf returns c as a MilliClock when it implements one whose
// UnixMilli agrees with its Now: a UnixMilli read between two Now reads lies
// between them, in one of three tries. It returns nil otherwise (c is nil,
// does not implement MilliClock, or disagrees), and the caller reads Now.
// The local backend calls it once when it is built.
func MilliClockOf(c Clock) MilliClock {
	mc, ok := c.(MilliClock)
	if !ok {
		return nil
	}
	for try := 0; try < 3; try++ {
		before := Millis(c.Now())
		ms := mc.UnixMilli()
		if before <= ms && ms <= Millis(c.Now()) {
			return mc
		}
	}
	return nil
}
