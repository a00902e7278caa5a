package core

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSystemClockTracksWallClock: SystemClock reads within a millisecond of
// time.Now (which brackets it), keeps a wrong offset (as after a wall clock
// step) while it is younger than a second, and replaces it once older.
func TestSystemClockTracksWallClock(t *testing.T) {
	var c SystemClock
	// SystemClock is the wall clock: two time.Now readings bracket each
	// read, so a preemption between them widens the bracket, never fails it.
	for i := 0; i < 1000; i++ {
		before := time.Now()
		got := c.Now()
		after := time.Now()
		require.False(t, got.Before(before.Add(-time.Millisecond)), "SystemClock.Now() = %v, outside [%v, %v] ± 1ms", got, before, after)
		require.False(t, got.After(after.Add(time.Millisecond)), "SystemClock.Now() = %v, outside [%v, %v] ± 1ms", got, before, after)
	}
	// An offset an hour off, taken 0.5 s ago, is still used; taken 1.5 s ago,
	// it is replaced.
	c.Now() // a fresh offset
	wallOffset.Add(int64(time.Hour))
	// The offset's age is set, not waited for: 0.5 s back from now, so only
	// a stall of half a second between the store and the read could carry it
	// past the 1 s limit (a clock cannot be injected here: this is the code
	// that reads the wall clock).
	wallAt.Store(int64(time.Since(monoBase)) - int64(500*time.Millisecond))
	young := time.Until(c.Now())
	wallAt.Store(int64(time.Since(monoBase)) - int64(1500*time.Millisecond))
	old := time.Until(c.Now())
	require.GreaterOrEqual(t, young, 59*time.Minute, "offset an hour off: read %v ahead when 0.5s old, %v when 1.5s old; want about 1h, then within 1ms", young, old)
	require.LessOrEqual(t, old.Abs(), time.Millisecond, "offset an hour off: read %v ahead when 0.5s old, %v when 1.5s old; want about 1h, then within 1ms", young, old)
}

// TestSystemClockConcurrentMonotone: reads from many goroutines, across
// offset refreshes, never run backwards within a goroutine (beyond what the
// refresh corrects, here nothing: the clocks agree) and race with nothing.
func TestSystemClockConcurrentMonotone(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var c SystemClock
			last := c.Now()
			for i := 0; i < 20000; i++ {
				if i%1000 == 0 {
					expireWallOffset() // refreshes racing with reads
				}
				now := c.Now()
				if now.Before(last.Add(-time.Millisecond)) {
					errs <- now.Sub(last).String()
					return
				}
				last = now
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		assert.Fail(t, fmt.Sprintf("a goroutine's clock ran backwards by %s", e))
	}
}

// expireWallOffset makes the next SystemClock read refresh its offset, as
// a second after it was taken.
func expireWallOffset() { wallAt.Store(-int64(time.Hour)) }
