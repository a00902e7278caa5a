package local

import (
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/require"
)

// nowOnlyClock is a ManualClock read through Now only (it hides
// UnixMilli), so Allow goes through AllowN.
type nowOnlyClock struct{ c *core.ManualClock }

func (o nowOnlyClock) Now() time.Time { return o.c.Now() }

// TestAllowRefusesAClockBeforeTheEpoch: Allow with a clock that reads a
// time before the Unix epoch (a ManualClock built from time.Time{})
// returns core.ErrBadTime and creates no entry, whether the clock is read
// as milliseconds (core.MilliClock) or through Now, as AllowN does for
// such a time. It catches Allow's millisecond path deciding the time as a
// real one.
func TestAllowRefusesAClockBeforeTheEpoch(t *testing.T) {
	for _, clk := range []core.Clock{core.NewManualClock(time.Time{}), nowOnlyClock{core.NewManualClock(time.Time{})}} {
		l, err := New(core.PerWindow(10, time.Minute), WithClock(clk))
		require.NoError(t, err)
		d, err := l.Allow(ctx, "k")
		require.ErrorIs(t, err, core.ErrBadTime, "%T: Allow at %v = %+v, %v", clk, clk.Now(), d, err)
		require.ErrorIs(t, err, core.ErrInvalid, "%T: Allow at %v", clk, clk.Now())
		require.False(t, d.Allowed, "%T: Allow at %v", clk, clk.Now())
		require.Equal(t, 0, l.Len(), "%T: Allow at %v created an entry", clk, clk.Now())
	}
}
