package core

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCoarseClockMonotonic: a CoarseClock's MonotonicMillis is Go's
// monotonic clock since the process began, as stored at its last refresh:
// never ahead of a direct reading taken after it, never decreasing within
// one goroutine, while refreshing, across Stop and after it, and reaching
// a direct reading taken earlier (the refresh advances it); the zero value
// reads directly. Catches: a reading taken from the wall clock (Unix
// milliseconds, far ahead of the process's monotonic time), a stopped
// clock serving its frozen last refresh, a refresh that stores no
// monotonic reading.
func TestCoarseClockMonotonic(t *testing.T) {
	before := monoMillis()
	zero := (&CoarseClock{}).MonotonicMillis()
	require.True(t, before <= zero && zero <= monoMillis(), "zero value: %d, want a direct reading (%d or later)", zero, before)

	c, err := NewCoarseClock(time.Millisecond)
	require.NoError(t, err)
	target := monoMillis() + 2
	// The refresh is the event waited for; 30 s is what only a hang trips.
	require.Eventually(t, func() bool { return c.MonotonicMillis() >= target }, 30*time.Second, time.Millisecond,
		"the stored monotonic reading never reached %d", target)

	var wg sync.WaitGroup
	bad := make(chan string, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := int64(0)
			for i := 0; i < 20_000; i++ {
				m := c.MonotonicMillis()
				if direct := monoMillis(); m < last || m > direct {
					bad <- fmt.Sprintf("read %d after %d, direct reading %d", m, last, direct)
					return
				}
				last = m
			}
		}()
	}
	c.Stop() // while the readers run: their readings switch to direct ones
	wg.Wait()
	close(bad)
	for msg := range bad {
		assert.Fail(t, msg)
	}
	after := monoMillis()
	require.GreaterOrEqual(t, c.MonotonicMillis(), after, "a stopped clock serves its last refresh instead of a direct reading")
}

// TestSystemClockStamps: SystemClock's Stamps reads the wall and monotonic
// times of one instant: each between the readings UnixMilli and
// MonotonicMillis give just before and just after it. Catches: a Stamps
// that returns nanoseconds, the monotonic time from another origin, or the
// wall time without the offset.
func TestSystemClockStamps(t *testing.T) {
	var c SystemClock
	for range 1000 {
		w0, m0 := c.UnixMilli(), c.MonotonicMillis()
		w, m := c.Stamps()
		w1, m1 := c.UnixMilli(), c.MonotonicMillis()
		require.True(t, w0 <= w && w <= w1, "wall %d not within %d..%d", w, w0, w1)
		require.True(t, m0 <= m && m <= m1, "monotonic %d not within %d..%d", m, m0, m1)
	}
}
