package core

import (
	"sync"
	"testing"
	"time"
)

// TestSystemClockTracksWallClock: SystemClock reads within a millisecond of
// time.Now (which brackets it), keeps a wrong offset (as after a wall clock
// step) while it is younger than a second, and replaces it once older.
func TestSystemClockTracksWallClock(t *testing.T) {
	var c SystemClock
	for i := 0; i < 1000; i++ {
		before := time.Now()
		got := c.Now()
		after := time.Now()
		if got.Before(before.Add(-time.Millisecond)) || got.After(after.Add(time.Millisecond)) {
			t.Fatalf("SystemClock.Now() = %v, outside [%v, %v] ± 1ms", got, before, after)
		}
	}
	// An offset an hour off, taken 0.9 s ago, is still used; taken 1.1 s ago,
	// it is replaced.
	c.Now() // a fresh offset
	wallOffset.Add(int64(time.Hour))
	wallAt.Store(int64(time.Since(monoBase)) - int64(900*time.Millisecond))
	young := time.Until(c.Now())
	wallAt.Store(int64(time.Since(monoBase)) - int64(1100*time.Millisecond))
	old := time.Until(c.Now())
	if young < 59*time.Minute || old.Abs() > time.Millisecond {
		t.Fatalf("offset an hour off: read %v ahead when 0.9s old, %v when 1.1s old; want about 1h, then within 1ms", young, old)
	}
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
		t.Fatalf("a goroutine's clock ran backwards by %s", e)
	}
}

// expireWallOffset makes the next SystemClock read refresh its offset, as
// a second after it was taken.
func expireWallOffset() { wallAt.Store(-int64(time.Hour)) }
