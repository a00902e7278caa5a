package core

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
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
	refreshing, err := NewCoarseClock(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer refreshing.Stop()
	clocks := map[string]MilliClock{"SystemClock": SystemClock{}, "zero CoarseClock": &CoarseClock{},
		"stopped CoarseClock": stopped, "refreshing CoarseClock": refreshing}
	for name, c := range clocks {
		if MilliClockOf(c) == nil {
			t.Fatalf("MilliClockOf(%s) = nil: its UnixMilli disagrees with its Now", name)
		}
		before := time.Now().UnixMilli()
		got := c.UnixMilli()
		after := time.Now().UnixMilli()
		if lagOK := int64(50); name == "refreshing CoarseClock" && got >= before-lagOK && got <= after+1 {
			continue // it lags (TestCoarseClockFollowsTime bounds how much) and may refresh between two reads; MilliClockOf above checked Now against UnixMilli
		}
		if got < before-1 || got > after+1 {
			t.Fatalf("%s: UnixMilli %d outside [%d, %d] ± 1", name, got, before, after)
		}
		if now := Millis(c.Now()); now < got || now > got+1 {
			t.Fatalf("%s: Millis(Now()) %d right after UnixMilli %d", name, now, got)
		}
	}
}

// TestCoarseClockFollowsTime: a refreshing CoarseClock never runs ahead of
// the wall clock, advances with it, and lags it by no more than its
// resolution plus the scheduler's delay in most readings (more than 20 ms in
// under a quarter of them: CI machines are shared, and the race detector
// slows timers; a clock refreshed every 100 ms would lag more than 20 ms in
// about 80%).
func TestCoarseClockFollowsTime(t *testing.T) {
	const res = 2 * time.Millisecond
	c, err := NewCoarseClock(res)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	first := c.UnixMilli()
	var samples, late int
	for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		got := c.UnixMilli()
		wall := time.Now().UnixMilli()
		if got > wall+1 {
			t.Fatalf("CoarseClock %d ms ahead of the wall clock", got-wall)
		}
		samples++
		if wall-got > 20 {
			late++
		}
	}
	if late*4 >= samples {
		t.Fatalf("CoarseClock lagged the wall clock by more than 20 ms in %d of %d readings (resolution %s)", late, samples, res)
	}
	if moved := c.UnixMilli() - first; moved < 150 {
		t.Fatalf("CoarseClock moved %d ms in 200 ms", moved)
	}
}

// TestCoarseClockBadResolution: outside [1ms, 1s] is a typed error and
// starts no goroutine; both bounds themselves are accepted.
func TestCoarseClockBadResolution(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	for _, r := range []time.Duration{0, -time.Second, MinCoarseResolution - 1, MaxCoarseResolution + 1} {
		c, err := NewCoarseClock(r)
		if c != nil || !errors.Is(err, ErrBadResolution) || !errors.Is(err, ErrInvalid) {
			t.Fatalf("NewCoarseClock(%s) = %v, %v; want nil and ErrBadResolution", r, c, err)
		}
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Fatalf("refused resolutions left %d goroutines running, %d before", n, goroutines)
	}
	for _, r := range []time.Duration{MinCoarseResolution, MaxCoarseResolution} {
		c, err := NewCoarseClock(r)
		if err != nil {
			t.Fatalf("NewCoarseClock(%s): %v", r, err)
		}
		c.Stop()
	}
}

// TestCoarseClockStopWhileRead: reads race with refreshes and with two
// concurrent Stops (and Stop on the zero value) without a data race, keep
// reading after Stop returns, and never go back by more than a millisecond
// (the wall clock is not stepped during the test) or before the test began.
func TestCoarseClockStopWhileRead(t *testing.T) {
	start := time.Now().UnixMilli()
	c, err := NewCoarseClock(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var stopped atomic.Bool
	var readers, stoppers sync.WaitGroup
	bad := make(chan string, 4)
	for g := 0; g < 4; g++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			last, after := start, 0
			for after < 1000 { // keep reading 1,000 times past Stop
				if stopped.Load() {
					after++
				}
				ms := c.UnixMilli()
				if ms < last-1 {
					bad <- fmt.Sprintf("read %d ms after %d (test began at %d)", ms, last, start)
					return
				}
				last = max(last, ms)
			}
		}()
	}
	time.Sleep(5 * time.Millisecond)
	for g := 0; g < 2; g++ {
		stoppers.Add(1)
		go func() { defer stoppers.Done(); c.Stop() }()
	}
	stoppers.Wait()
	stopped.Store(true)
	(&CoarseClock{}).Stop()
	readers.Wait()
	close(bad)
	for msg := range bad {
		t.Fatal(msg)
	}
}

// TestCoarseClockDroppedStops: a refreshing clock dropped without Stop
// ends its goroutine once the garbage collector finds it unreachable.
func TestCoarseClockDroppedStops(t *testing.T) {
	c, err := NewCoarseClock(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	ticker := c.t
	c = nil
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		select {
		case <-ticker.done:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("the refresh goroutine of a dropped CoarseClock still runs 10 s later")
}
