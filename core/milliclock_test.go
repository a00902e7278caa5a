package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// nowOnlyClock is a Clock that is no MilliClock.
type nowOnlyClock struct{}

func (nowOnlyClock) Now() time.Time { return time.Now() }

// offsetClock embeds SystemClock and overrides Now, so its promoted
// UnixMilli disagrees with its Now by off.
type offsetClock struct {
	SystemClock
	off time.Duration
}

func (c offsetClock) Now() time.Time { return c.SystemClock.Now().Add(c.off) }

// TestMilliClockOf: core's clocks are accepted as themselves; nil, a Clock
// without UnixMilli, and one whose UnixMilli disagrees with Now either way
// (by an hour, or by 50 ms: more than the time between two reads) are
// refused.
func TestMilliClockOf(t *testing.T) {
	manual := NewManualClock(time.UnixMilli(-1))
	for name, c := range map[string]MilliClock{"SystemClock": SystemClock{}, "ManualClock": manual, "zero CoarseClock": &CoarseClock{}} {
		got := MilliClockOf(c)
		require.False(t, got != c, "MilliClockOf(%s) = %v, want the clock itself", name, got)
	}
	refused := map[string]Clock{"nil": nil, "Now only": nowOnlyClock{}}
	for _, off := range []time.Duration{time.Hour, -time.Hour, 50 * time.Millisecond, -50 * time.Millisecond} {
		refused["offset "+off.String()] = offsetClock{off: off}
	}
	for name, c := range refused {
		got := MilliClockOf(c)
		require.False(t, got != nil, "MilliClockOf(%s) = %v, want nil", name, got)
	}
}
