package core

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLimitBounds: Validate refuses a Max past MaxLimit and a Window past
// MaxWindow (each matching ErrInvalid), and accepts both bounds.
func TestLimitBounds(t *testing.T) {
	assert.ErrorIs(t, PerWindow(MaxLimit+1, time.Minute).Validate(), ErrBadLimit)
	assert.ErrorIs(t, PerWindow(MaxLimit+1, time.Minute).Validate(), ErrInvalid)
	assert.ErrorIs(t, PerWindow(1, MaxWindow+time.Millisecond).Validate(), ErrBadWindow)
	assert.ErrorIs(t, PerWindow(1, time.Duration(math.MaxInt64)).Validate(), ErrBadWindow, "a \"lifetime\" window")
	assert.NoError(t, PerWindow(MaxLimit, time.Minute).Validate())
	assert.NoError(t, PerWindow(1, MaxWindow).Validate())
}

// TestLongWindowDurationsDoNotWrap: at the longest window, the sliding
// window's ResetAfter (up to 2w − elapsed) and a weighted request's
// RetryAfter stay positive (their ms were turned into a Duration by a
// multiplication that wrapped past about 292 years); a request stamped at
// the zero time.Time, whose wait passes Duration's range, saturates
// instead of wrapping to an arbitrary value.
func TestLongWindowDurationsDoNotWrap(t *testing.T) {
	now := int64(1_764_979_200_000)
	lim := PerWindow(4, MaxWindow)
	require.NoError(t, lim.Validate())
	var s WindowState
	d := s.DecideSliding(lim, now, 4, true)
	assert.True(t, d.Allowed)
	assert.Greater(t, d.ResetAfter, MaxWindow, "allowed: %+v", d)
	d = s.DecideSliding(lim, now, 2, true)
	assert.False(t, d.Allowed)
	assert.Greater(t, d.RetryAfter, time.Duration(0), "denied weight 2: %+v", d)
	assert.Greater(t, d.ResetAfter, MaxWindow, "denied weight 2: %+v", d)

	var z WindowState
	zero := Millis(time.Time{})
	z.DecideSliding(PerWindow(1, time.Minute), zero, 1, true)
	d = z.DecideSliding(PerWindow(1, time.Minute), zero, 1, true)
	assert.False(t, d.Allowed)
	assert.Equal(t, time.Duration(math.MaxInt64), d.RetryAfter, "zero time.Time, denied (about 1969 years): %+v", d)
	assert.Equal(t, time.Duration(math.MaxInt64), d.ResetAfter, "zero time.Time, denied: %+v", d)
}

// TestHugeMaxCountsDoNotWrap: at MaxLimit, the fixed window's count is
// exact: a second request of weight Max in one window is denied (with
// Max = math.MaxInt64, Cur+n wrapped negative and admitted it).
func TestHugeMaxCountsDoNotWrap(t *testing.T) {
	lim := Limit{Max: MaxLimit, Window: time.Minute, Algorithm: FixedWindow}
	require.NoError(t, lim.Validate())
	var s WindowState
	now := int64(1_764_979_200_000)
	d := s.DecideFixed(lim, now, lim.Max, true)
	assert.True(t, d.Allowed, "%+v", d)
	d = s.DecideFixed(lim, now, lim.Max, true)
	assert.False(t, d.Allowed, "a second request of weight Max in one window: %+v, state %+v", d, s)
	assert.Equal(t, int64(0), d.Remaining, "%+v", d)
}
