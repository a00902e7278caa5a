package redis

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadInputWritesNothing: every bad call returns its typed error and
// leaves Redis empty (DBSIZE 0 after each), with no script call sent.
func TestBadInputWritesNothing(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	now := time.Now()
	long := strings.Repeat("x", core.MaxKeyLen+1)
	for _, lim := range everyLimit(core.PerWindow(10, time.Second)) {
		l := newLimiter(t, c, lim)
		calls := []struct {
			name string
			want error
			do   func() error
		}{
			{"empty key", core.ErrEmptyKey, func() error { _, err := l.AllowN(ctx, "", now, 1); return err }},
			{"long key", core.ErrKeyTooLong, func() error { _, err := l.AllowN(ctx, long, now, 1); return err }},
			{"weight 0", core.ErrBadWeight, func() error { _, err := l.AllowN(ctx, "k", now, 0); return err }},
			{"weight -1", core.ErrBadWeight, func() error { _, err := l.AllowN(ctx, "k", now, -1); return err }},
			{"weight > max", core.ErrBadWeight, func() error { _, err := l.AllowN(ctx, "k", now, 11); return err }},
			{"allow empty", core.ErrEmptyKey, func() error { _, err := l.Allow(ctx, ""); return err }},
			{"peek empty", core.ErrEmptyKey, func() error { _, err := l.Peek(ctx, "", now); return err }},
			{"peek long", core.ErrKeyTooLong, func() error { _, err := l.Peek(ctx, long, now); return err }},
			{"reset empty", core.ErrEmptyKey, func() error { return l.Reset(ctx, "") }},
			{"time before the epoch", core.ErrBadTime, func() error { _, err := l.AllowN(ctx, "k", time.Time{}, 1); return err }},
			{"peek before the epoch", core.ErrBadTime, func() error { _, err := l.Peek(ctx, "k", time.Unix(-1, 0)); return err }},
			{"time past MaxMillis", core.ErrBadTime, func() error { _, err := l.AllowN(ctx, "k", time.UnixMilli(core.MaxMillis+1), 1); return err }},
			{"each before the epoch", core.ErrBadTime, func() error {
				return l.AllowEach(ctx, []Ask{{Key: "k", Now: now, N: 1}, {Key: "j", N: 1}}, make([]core.Decision, 2))
			}},
		}
		for _, call := range calls {
			err := call.do()
			if assert.ErrorIs(t, err, call.want, "%s %s: err %v, want %v matching ErrInvalid", lim, call.name, err, call.want) {
				assert.ErrorIs(t, err, core.ErrInvalid, "%s %s: err %v, want %v matching ErrInvalid", lim, call.name, err, call.want)
			}
			n := dbsize(t, c)
			require.Equal(t, int64(0), n, "%s %s: DBSIZE %d after a bad call, want 0", lim, call.name, n)
		}
		s := l.Stats()
		if assert.Equal(t, uint64(0), s.Calls, "%s: bad input sent traffic: %+v", lim, s) {
			assert.Equal(t, uint64(0), s.RoundTrips, "%s: bad input sent traffic: %+v", lim, s)
		}
	}
}

// TestNewRejectsBadConfig: invalid limits give core's errors, bad options
// and a nil client errors matching ErrInvalid.
func TestNewRejectsBadConfig(t *testing.T) {
	c, _ := redistest.Client(t)
	cases := []struct {
		name string
		lim  core.Limit
		opts []Option
		want error
	}{
		{"max 0", core.PerWindow(0, time.Second), nil, core.ErrBadLimit},
		{"max -1", core.PerWindow(-1, time.Second), nil, core.ErrBadLimit},
		{"window 0", core.PerWindow(1, 0), nil, core.ErrBadWindow},
		{"window -1s", core.PerWindow(1, -time.Second), nil, core.ErrBadWindow},
		{"window 1µs", core.PerWindow(1, time.Microsecond), nil, core.ErrBadWindow},
		{"algorithm", core.Limit{Max: 1, Window: time.Second, Algorithm: 9}, nil, core.ErrBadAlgorithm},
		{"prefix {", core.PerWindow(1, time.Second), []Option{WithPrefix("a{b")}, core.ErrInvalid},
		{"prefix }", core.PerWindow(1, time.Second), []Option{WithPrefix("a}b")}, core.ErrInvalid},
		{"timeout 0", core.PerWindow(1, time.Second), []Option{WithTimeout(0)}, core.ErrInvalid},
		{"nil clock", core.PerWindow(1, time.Second), []Option{WithClock(nil)}, core.ErrInvalid},
		{"slack", core.PerWindow(1, time.Second), []Option{WithExpirySlack(-1)}, core.ErrInvalid},
		{"batch 0", core.PerWindow(1, time.Second), []Option{WithPipelining(0, 0)}, core.ErrInvalid},
		{"window<0", core.PerWindow(1, time.Second), []Option{WithPipelining(-1, 8)}, core.ErrInvalid},
	}
	for _, tc := range cases {
		_, err := New(c, tc.lim, tc.opts...)
		if assert.ErrorIs(t, err, tc.want, "%s: err %v, want %v", tc.name, err, tc.want) {
			assert.ErrorIs(t, err, core.ErrInvalid, "%s: err %v, want %v", tc.name, err, tc.want)
		}
	}
	_, err := New(nil, core.PerWindow(1, time.Second))
	assert.ErrorIs(t, err, core.ErrInvalid, "nil client: err %v, want ErrInvalid", err)
	n := dbsize(t, c)
	require.Equal(t, int64(0), n, "DBSIZE %d after New, want 0", n)
}
