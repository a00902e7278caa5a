package core

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// TestMilliClocksAgreeWithNow: every MilliClock's UnixMilli is Millis of its
// Now, before 1970 too (ManualClock), and within a millisecond of the system
// clock (SystemClock, a stopped or zero CoarseClock).
func TestMilliClocksAgreeWithNow(t *testing.T) {
	for _, at := range []time.Time{time.Unix(0, -1), time.Unix(-1, 999_999), time.UnixMilli(1_700_000_000_123).Add(999_999)} {
		m := NewManualClock(at)
		if got, want := m.UnixMilli(), Millis(m.Now()); got != want {
			t.Fatalf("ManualClock at %v: UnixMilli %d, Millis(Now()) %d", at, got, want)
		}
	}
	stopped, err := NewCoarseClock(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	stopped.Stop()
	for name, c := range map[string]MilliClock{"SystemClock": SystemClock{}, "zero CoarseClock": &CoarseClock{}, "stopped CoarseClock": stopped} {
		before := time.Now().UnixMilli()
		got := c.UnixMilli()
		after := time.Now().UnixMilli()
		if got < before-1 || got > after+1 {
			t.Fatalf("%s: UnixMilli %d outside [%d, %d] ± 1", name, got, before, after)
		}
		if now := Millis(c.Now()); now < got || now > got+1 {
			t.Fatalf("%s: Millis(Now()) %d right after UnixMilli %d", name, now, got)
		}
	}
}

// TestCoarseClockFollowsTime: a refreshing CoarseClock advances with the
// wall clock and lags it by no more than its resolution plus the
// scheduler's delay (50 ms allowed here: CI machines are shared, and the
// race detector slows timers).
func TestCoarseClockFollowsTime(t *testing.T) {
	const res = 2 * time.Millisecond
	c, err := NewCoarseClock(res)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	first := c.UnixMilli()
	var worst int64
	for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		got := c.UnixMilli()
		wall := time.Now().UnixMilli()
		if got > wall+1 {
			t.Fatalf("CoarseClock %d ms ahead of the wall clock", got-wall)
		}
		worst = max(worst, wall-got)
	}
	if worst > 50 {
		t.Fatalf("CoarseClock lagged the wall clock by %d ms (resolution %s)", worst, res)
	}
	if moved := c.UnixMilli() - first; moved < 150 {
		t.Fatalf("CoarseClock moved %d ms in 200 ms", moved)
	}
}

// TestCoarseClockBadResolution: outside [1ms, 1s] is a typed error.
func TestCoarseClockBadResolution(t *testing.T) {
	for _, r := range []time.Duration{0, -time.Second, time.Millisecond - 1, time.Second + 1} {
		c, err := NewCoarseClock(r)
		if c != nil || !errors.Is(err, ErrBadResolution) || !errors.Is(err, ErrInvalid) {
			t.Fatalf("NewCoarseClock(%s) = %v, %v; want nil and ErrBadResolution", r, c, err)
		}
	}
}

// TestCoarseClockStopWhileRead: reads race with refreshes and with Stop
// (called twice, and on the zero value) without a data race, and never
// return 0 or a time before the test began.
func TestCoarseClockStopWhileRead(t *testing.T) {
	start := time.Now().UnixMilli()
	c, err := NewCoarseClock(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	bad := make(chan int64, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20_000; i++ {
				if ms := c.UnixMilli(); ms < start-1 {
					bad <- ms
					return
				}
			}
		}()
	}
	time.Sleep(5 * time.Millisecond)
	c.Stop()
	c.Stop()
	(&CoarseClock{}).Stop()
	wg.Wait()
	close(bad)
	for ms := range bad {
		t.Fatalf("read %d ms, before the test began at %d", ms, start)
	}
}
