package core

import (
	"errors"
	"strings"
	"testing"
	"time"
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
		{Limit{Max: 1, Window: time.Second, Algorithm: 4}, ErrBadAlgorithm},
		{Limit{Max: 1001, Window: time.Millisecond, Algorithm: TokenBucket}, ErrBadLimit},
	}
	for _, c := range cases {
		err := c.l.Validate()
		if c.want == nil {
			if err != nil {
				t.Errorf("%v: %v", c.l, err)
			}
			continue
		}
		if !errors.Is(err, c.want) || !errors.Is(err, ErrInvalid) || errors.Is(err, ErrUnavailable) {
			t.Errorf("%v: err %v, want %v matching ErrInvalid only", c.l, err, c.want)
		}
	}
}

// TestCheckWeight: 1..Max only.
func TestCheckWeight(t *testing.T) {
	l := PerWindow(5, time.Second)
	for n, ok := range map[int64]bool{-1: false, 0: false, 1: true, 5: true, 6: false} {
		err := l.CheckWeight(n)
		if ok != (err == nil) || (!ok && (!errors.Is(err, ErrBadWeight) || !errors.Is(err, ErrInvalid))) {
			t.Errorf("CheckWeight(%d) = %v", n, err)
		}
	}
}

// TestValidateKey: empty and over MaxKeyLen are refused; any bytes pass.
func TestValidateKey(t *testing.T) {
	if err := ValidateKey(""); !errors.Is(err, ErrEmptyKey) || !errors.Is(err, ErrInvalid) {
		t.Errorf("empty: %v", err)
	}
	if err := ValidateKey(strings.Repeat("k", MaxKeyLen+1)); !errors.Is(err, ErrKeyTooLong) || !errors.Is(err, ErrInvalid) {
		t.Errorf("long: %v", err)
	}
	for _, k := range []string{"a", strings.Repeat("k", MaxKeyLen), "{x}:y z", "\x00\xff", "é"} {
		if err := ValidateKey(k); err != nil {
			t.Errorf("ValidateKey(%q) = %v", k, err)
		}
	}
	if errors.Is(ErrEmptyKey, ErrKeyTooLong) {
		t.Error("distinct sentinels match each other")
	}
}

// TestParseAlgorithm: String and ParseAlgorithm are inverses.
func TestParseAlgorithm(t *testing.T) {
	for _, a := range Algorithms {
		got, err := ParseAlgorithm(a.String())
		if err != nil || got != a {
			t.Errorf("ParseAlgorithm(%q) = %v, %v", a.String(), got, err)
		}
	}
	for _, s := range []string{"", "Sliding", "gcra", "token"} {
		if _, err := ParseAlgorithm(s); !errors.Is(err, ErrBadAlgorithm) || !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseAlgorithm(%q) err %v", s, err)
		}
	}
	if Algorithm(9).String() != "Algorithm(9)" {
		t.Errorf("unknown algorithm renders %q", Algorithm(9).String())
	}
}

// TestUnavailableError matches ErrUnavailable, not ErrInvalid, and unwraps.
func TestUnavailableError(t *testing.T) {
	cause := errors.New("dial tcp: refused")
	err := error(&UnavailableError{Op: "redis evalsha", Err: cause})
	if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrInvalid) || !errors.Is(err, cause) {
		t.Fatalf("UnavailableError matching wrong: %v", err)
	}
}
