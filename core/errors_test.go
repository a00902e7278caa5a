package core

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLimitValidate: each bad limit has its own sentinel, and all match
// ErrInvalid.
func TestLimitValidate(t *testing.T) {
	cases := []struct {
		l    Limit
		want error
	}{
		{PerWindow(10, time.Second), nil},
		{Limit{Max: 1, Window: time.Millisecond, Algorithm: TokenBucket}, nil},
		{Limit{Max: 1000, Window: time.Millisecond, Algorithm: TokenBucket}, nil},
		{PerWindow(0, time.Second), ErrBadLimit},
		{PerWindow(-1, time.Second), ErrBadLimit},
		{PerWindow(1, 0), ErrBadWindow},
		{PerWindow(1, -time.Second), ErrBadWindow},
		{PerWindow(1, 999*time.Microsecond), ErrBadWindow},
		{PerWindow(1, 1500*time.Microsecond), ErrBadWindow}, // not whole ms: enforced as 1 ms, sharing its keys
		{Limit{Max: 1, Window: time.Second, Algorithm: 4}, ErrBadAlgorithm},
		{Limit{Max: 1001, Window: time.Millisecond, Algorithm: TokenBucket}, ErrBadLimit},
	}
	for _, c := range cases {
		err := c.l.Validate()
		if c.want == nil {
			assert.NoError(t, err, "%v", c.l)
			continue
		}
		assert.ErrorIs(t, err, c.want, "%v: err %v, want %v matching ErrInvalid only", c.l, err, c.want)
		assert.ErrorIs(t, err, ErrInvalid, "%v: err %v, want %v matching ErrInvalid only", c.l, err, c.want)
		assert.NotErrorIs(t, err, ErrUnavailable, "%v: err %v, want %v matching ErrInvalid only", c.l, err, c.want)
	}
}

// TestCheckWeight: 1..Max only.
func TestCheckWeight(t *testing.T) {
	l := PerWindow(5, time.Second)
	for n, ok := range map[int64]bool{-1: false, 0: false, 1: true, 5: true, 6: false} {
		err := l.CheckWeight(n)
		if assert.Equal(t, ok, err == nil, "CheckWeight(%d) = %v", n, err) && !ok {
			assert.ErrorIs(t, err, ErrBadWeight, "CheckWeight(%d) = %v", n, err)
			assert.ErrorIs(t, err, ErrInvalid, "CheckWeight(%d) = %v", n, err)
		}
	}
}

// TestCheckTime: a time before the Unix epoch (the zero time.Time among
// them, and half a millisecond before it) is ErrBadTime, matching
// ErrInvalid, and so is a time past MaxMillis; the epoch itself and
// MaxMillis are accepted. It catches a TAT allowed past 2^53 µs.
func TestCheckTime(t *testing.T) {
	for _, bad := range []time.Time{{}, time.Unix(-1, 0), time.Unix(0, -500_000)} {
		err := CheckTime(bad)
		assert.ErrorIs(t, err, ErrBadTime, "%v", bad)
		assert.ErrorIs(t, err, ErrInvalid, "%v", bad)
	}
	for _, good := range []time.Time{time.Unix(0, 0), time.UnixMilli(1_764_979_200_000)} {
		assert.NoError(t, CheckTime(good), "%v", good)
	}
	// CheckMillis, the same rule on ms since the epoch
	assert.ErrorIs(t, CheckMillis(-1), ErrBadTime, "ms -1")
	assert.NoError(t, CheckMillis(0), "ms 0")
	// The latest time: a token bucket's TAT a MaxWindow ahead of it is
	// still below 2^53 µs, a ms later it need not be.
	assert.NoError(t, CheckMillis(MaxMillis), "MaxMillis")
	assert.LessOrEqual(t, MaxMillis*1000+int64(MaxWindow/time.Microsecond), int64(1<<53), "a TAT past 2^53 µs accepted")
	assert.Equal(t, 2155, time.UnixMilli(MaxMillis).UTC().Year(), "MaxMillis's year")
	assert.ErrorIs(t, CheckMillis(MaxMillis+1), ErrBadTime, "MaxMillis + 1")
	assert.ErrorIs(t, CheckTime(time.UnixMilli(MaxMillis+1)), ErrBadTime, "MaxMillis + 1 ms")
	assert.ErrorIs(t, CheckTime(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)), ErrBadTime, "year 9999")
}

// TestValidateKey: empty and over MaxKeyLen are refused; any bytes pass.
func TestValidateKey(t *testing.T) {
	err := ValidateKey("")
	if assert.ErrorIs(t, err, ErrEmptyKey, "empty: %v", err) {
		assert.ErrorIs(t, err, ErrInvalid, "empty: %v", err)
	}
	err = ValidateKey(strings.Repeat("k", MaxKeyLen+1))
	if assert.ErrorIs(t, err, ErrKeyTooLong, "long: %v", err) {
		assert.ErrorIs(t, err, ErrInvalid, "long: %v", err)
	}
	for _, k := range []string{"a", strings.Repeat("k", MaxKeyLen), "{x}:y z", "\x00\xff", "é"} {
		err := ValidateKey(k)
		assert.NoError(t, err, "ValidateKey(%q) = %v", k, err)
	}
	assert.NotErrorIs(t, ErrEmptyKey, ErrKeyTooLong, "distinct sentinels match each other")
}

// TestParseAlgorithm: String and ParseAlgorithm are inverses.
func TestParseAlgorithm(t *testing.T) {
	for _, a := range Algorithms {
		got, err := ParseAlgorithm(a.String())
		if assert.NoError(t, err, "ParseAlgorithm(%q) = %v, %v", a.String(), got, err) {
			assert.Equal(t, a, got, "ParseAlgorithm(%q) = %v, %v", a.String(), got, err)
		}
	}
	for _, s := range []string{"", "Sliding", "gcra", "token"} {
		_, err := ParseAlgorithm(s)
		if assert.ErrorIs(t, err, ErrBadAlgorithm, "ParseAlgorithm(%q) err %v", s, err) {
			assert.ErrorIs(t, err, ErrInvalid, "ParseAlgorithm(%q) err %v", s, err)
		}
	}
	assert.Equal(t, "Algorithm(9)", Algorithm(9).String(), "unknown algorithm renders %q", Algorithm(9).String())
}

// TestUnavailableError matches ErrUnavailable, not ErrInvalid, and unwraps.
func TestUnavailableError(t *testing.T) {
	cause := errors.New("dial tcp: refused")
	err := error(&UnavailableError{Op: "redis evalsha", Err: cause})
	require.ErrorIs(t, err, ErrUnavailable, "UnavailableError matching wrong: %v", err)
	require.NotErrorIs(t, err, ErrInvalid, "UnavailableError matching wrong: %v", err)
	require.ErrorIs(t, err, cause, "UnavailableError matching wrong: %v", err)
}
