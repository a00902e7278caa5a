package redis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestLogRandomStateAgrees plays random weighted histories on the exact log
// (time forward, still and back, late stamps, peeks, Reset, n = Max, Max
// up to core.MaxLimit) against core and requires, after every step, the
// same decision and the same stored state: the members (score, units)
// equal core's entries, the total member equals core's Units, and the set
// holds at most Max members besides the total.
func TestLogRandomStateAgrees(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	shapes := []core.Limit{
		{Max: 1, Window: 5 * time.Millisecond},
		{Max: 2, Window: 3 * time.Millisecond},
		{Max: 5, Window: 10 * time.Millisecond},
		{Max: 17, Window: 40 * time.Millisecond},
		{Max: 300, Window: 200 * time.Millisecond},
		{Max: core.MaxLimit, Window: 50 * time.Millisecond},
		{Max: core.MaxLimit - 1, Window: time.Hour},
		{Max: 1 << 40, Window: 9 * time.Millisecond},
		{Max: 20, Window: core.MaxWindow},
	}
	for si, shape := range shapes {
		shape.Algorithm = core.SlidingLog
		t.Run(shape.String(), func(t *testing.T) {
			l := newLimiter(t, c, shape, WithExpirySlack(time.Hour), WithPrefix(fmt.Sprintf("lr%d", si)))
			for seed := uint64(1); seed <= 12; seed++ {
				key := fmt.Sprintf("id%d", seed)
				rng := rand.New(rand.NewPCG(seed, uint64(shape.Max)^uint64(si)))
				m := &model{limit: shape}
				w := shape.WindowMillis()
				if w > 1000 {
					w = 1000 // steps of a long window move within a second
				}
				now := int64(1_764_979_200_000) + rng.Int64N(w*10)
				for step := 0; step < 400; step++ {
					switch p := rng.IntN(100); {
					case p < 20:
					case p < 60:
						now += rng.Int64N(w/4 + 1)
					case p < 70:
						now += w + rng.Int64N(2*w)
					case p < 90:
						now -= rng.Int64N(w + 2)
					default:
						now += rng.Int64N(w + 1)
					}
					var n int64
					switch p := rng.IntN(100); {
					case p < 45:
						n = 1
					case p < 55:
						n = shape.Max
					case p < 62:
						n = max(1, shape.Max-1)
					case p < 80:
						n = 1 + rng.Int64N(min(shape.Max, 4))
					default:
						n = 1 + rng.Int64N(shape.Max)
					}
					op := rng.IntN(100)
					desc := fmt.Sprintf("seed %d step %d now=%d n=%d op=%d", seed, step, now, n, op)
					switch {
					case op < 3:
						require.NoError(t, l.Reset(ctx, key), desc)
						m.log = core.LogState{}
						continue
					case op < 20:
						want := m.decide(now, 1, false)
						got, err := l.Peek(ctx, key, at(now))
						require.NoError(t, err, desc)
						require.True(t, sameDecision(got, want), "%s peek:\n redis %+v\n go    %+v", desc, got, want)
					default:
						want := m.decide(now, n, true)
						got, err := l.AllowN(ctx, key, at(now), n)
						require.NoError(t, err, desc)
						require.True(t, sameDecision(got, want), "%s commit:\n redis %+v\n go    %+v", desc, got, want)
					}
					requireLogState(t, c, l.Key(key), m.log, shape.Max, desc)
				}
			}
		})
	}
}

// requireLogState compares the stored sorted set with core's state.
func requireLogState(t *testing.T, c goredis.UniversalClient, key string, want core.LogState, max int64, desc string) {
	t.Helper()
	zs, err := c.ZRangeWithScores(context.Background(), key, 0, -1).Result()
	require.NoError(t, err, desc)
	var got []core.LogEntry
	total := int64(-1)
	for _, z := range zs {
		name := z.Member.(string)
		if rest, ok := strings.CutPrefix(name, "#"); ok {
			total, err = strconv.ParseInt(rest, 10, 64)
			require.NoError(t, err, desc)
			continue
		}
		f := strings.Split(name, ":")
		u := int64(1)
		if len(f) == 3 {
			u, err = strconv.ParseInt(f[2], 10, 64)
			require.NoError(t, err, desc)
		}
		require.Equal(t, strconv.FormatInt(int64(z.Score), 10), f[0], "%s: member %q scored %v", desc, name, z.Score)
		got = append(got, core.LogEntry{At: int64(z.Score), N: u})
	}
	if len(want.Entries) == 0 {
		require.Empty(t, got, "%s", desc)
		require.Equal(t, int64(-1), total, "%s: an empty log keeps no total member", desc)
		return
	}
	require.Equal(t, want.Entries, got, "%s: entries", desc)
	require.Equal(t, want.Units, total, "%s: total", desc)
	require.LessOrEqual(t, int64(len(got)), max, "%s: members", desc)
}

// TestLogDeepRetryAgrees: a log of thousands of members of weights 1..4,
// then denied requests of every size, whose RetryAfter reads the k-th unit
// from either end through several doubling pages, and peeks after part of
// the log expired: every decision as core's.
func TestLogDeepRetryAgrees(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	lim := core.Limit{Max: 9000, Window: 10 * time.Second, Algorithm: core.SlidingLog}
	l := newLimiter(t, c, lim, WithExpirySlack(time.Hour))
	m := &model{limit: lim}
	rng := rand.New(rand.NewPCG(9, 9))
	now := int64(1_764_979_200_000)
	for i := 0; i < 3000; i++ {
		now += 1 + rng.Int64N(2)
		n := 1 + rng.Int64N(4)
		want := m.decide(now, n, true)
		got, err := l.AllowN(ctx, "deep", at(now), n)
		require.NoError(t, err)
		require.True(t, sameDecision(got, want), "fill %d:\n redis %+v\n go    %+v", i, got, want)
	}
	for _, shift := range []int64{0, 2000, 4500} {
		for _, n := range []int64{1, 2, 17, 500, 1500, 3000, 4000, 4500, 6000, 8000, 8999, 9000} {
			at2 := now + shift
			want := m.decide(at2, n, false)
			got, err := l.peekN(ctx, "deep", at2, n)
			require.NoError(t, err)
			require.True(t, sameDecision(got, want), "shift %d n=%d:\n redis %+v\n go    %+v", shift, n, got, want)
		}
	}
}

// peekN is a peek of n units (Peek asks for one).
func (l *Limiter) peekN(ctx context.Context, key string, now int64, n int64) (core.Decision, error) {
	return l.decide(ctx, key, now, n, false)
}
