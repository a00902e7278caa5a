// Package clocktest holds Clocks that tests of the limiters use to see how
// a limiter reads its clock: whether through core.MilliClock's UnixMilli
// (Counting counts those reads) and whether it notices a clock whose
// UnixMilli disagrees with its Now (Skewed).
package clocktest

import (
	"sync/atomic"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// Counting is a core.MilliClock over a *core.ManualClock that counts its
// UnixMilli reads. Its ManualClock must be set; the zero count is 0.
type Counting struct {
	*core.ManualClock
	reads atomic.Int64
}

// UnixMilli counts the read and returns the ManualClock's.
func (c *Counting) UnixMilli() int64 {
	c.reads.Add(1)
	return c.ManualClock.UnixMilli()
}

// Reads is how many times UnixMilli was called.
func (c *Counting) Reads() int64 { return c.reads.Load() }

// Skewed is the embedding mistake core.MilliClock warns of: Now is the
// ManualClock's plus Skew, while the promoted UnixMilli is the ManualClock's
// own, so the two disagree by Skew. A limiter must read its Now.
type Skewed struct {
	*core.ManualClock
	Skew time.Duration
}

// Now returns the ManualClock's time plus Skew.
func (s Skewed) Now() time.Time { return s.ManualClock.Now().Add(s.Skew) }
