package redis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestBucketFractionAgreesWithCore: token buckets whose Max does not divide
// the window in µs (the TAT carries a fraction of a µs), up to core.MaxLimit
// and core.MaxWindow (where units × window and Max × time pass 2^53 and
// bucket.lua's muldiv takes its long path), decide at Redis exactly as
// core does over random histories of weights, peeks and time moving
// forward, standing still and going back; and the stored value, read as a
// plain number (as a script that knows nothing of the fraction reads it),
// is the TAT to within 1 µs. It catches a fraction lost or mis-parsed in
// the script, a muldiv off by one on either path, and a value written with
// the fraction in another form.
func TestBucketFractionAgreesWithCore(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for _, lim := range []core.Limit{
		{Max: 750_000, Window: time.Second},
		{Max: 60_000, Window: time.Second},
		{Max: 999_983, Window: time.Second},
		{Max: 3, Window: time.Millisecond},
		{Max: 7, Window: 997 * time.Millisecond},
		{Max: 1_000_003, Window: 24 * time.Hour},
		{Max: core.MaxLimit, Window: core.MaxWindow},
		{Max: core.MaxLimit - 1, Window: core.MaxWindow},
		{Max: 12_345_679, Window: core.MaxWindow},
	} {
		lim.Algorithm = core.TokenBucket
		require.NoError(t, lim.Validate(), "%v", lim)
		t.Run(lim.String(), func(t *testing.T) {
			l := newLimiter(t, c, lim, WithExpirySlack(time.Hour))
			for seed := uint64(1); seed <= 3; seed++ {
				key := fmt.Sprintf("frac:%d", seed)
				rng := rand.New(rand.NewPCG(seed, uint64(lim.Max)))
				m := &model{limit: lim}
				now := int64(1_764_979_200_000) + rng.Int64N(1000)
				var allowed, denied, fractions int
				for step := 0; step < 200; step++ {
					switch p := rng.IntN(100); {
					case p < 60:
						now += rng.Int64N(min(max(lim.WindowMillis()/5, 1), 50_000) + 1)
					case p < 70:
						now -= rng.Int64N(min(lim.WindowMillis(), 50_000) + 1)
					}
					n := weight(rng, lim.Max)
					commit := rng.IntN(100) < 85
					var got, want core.Decision
					var err error
					if commit {
						want = m.decide(now, n, true)
						got, err = l.AllowN(ctx, key, at(now), n)
					} else {
						want = m.decide(now, 1, false)
						got, err = l.Peek(ctx, key, at(now))
					}
					require.NoError(t, err, "seed %d step %d", seed, step)
					require.True(t, sameDecision(got, want), "seed %d step %d now=%d n=%d commit=%v:\n redis %+v\n go    %+v", seed, step, now, n, commit, got, want)
					if got.Allowed {
						allowed++
					} else {
						denied++
					}
					if !commit || !got.Allowed {
						continue
					}
					v, err := c.Get(ctx, l.Key(key)).Result()
					require.NoError(t, err, "seed %d step %d", seed, step)
					whole, frac, hasFrac := strings.Cut(v, ".")
					wantWhole, wantFrac := strconv.FormatInt(m.bucket.TAT, 10), strconv.FormatInt(m.bucket.Rem, 10)
					require.Equal(t, wantWhole, whole, "seed %d step %d: stored %q, core's TAT %+v", seed, step, v, m.bucket)
					require.Equal(t, m.bucket.Rem != 0, hasFrac, "seed %d step %d: stored %q, core's TAT %+v", seed, step, v, m.bucket)
					if hasFrac {
						fractions++
						require.Equal(t, wantFrac, frac, "seed %d step %d: stored %q, core's TAT %+v", seed, step, v, m.bucket)
						f, err := strconv.ParseFloat(v, 64)
						require.NoError(t, err, "seed %d step %d: stored %q is no number", seed, step, v)
						require.InDelta(t, float64(m.bucket.TAT), f, 1, "seed %d step %d: stored %q read as a number", seed, step, v)
					}
				}
				require.NotZero(t, allowed, "seed %d: no decision allowed", seed)
				require.NotZero(t, denied, "seed %d: no decision denied", seed)
				require.NotZero(t, fractions, "seed %d: no TAT with a fraction stored", seed)
			}
		})
	}
}

// TestRoundedScriptReadsFractions: during an upgrade, processes running the
// script released before the TAT carried a fraction of a µs
// (testdata/bucket_rounded.lua) share a bucket's key with upgraded ones.
// On a value the new script wrote with a fraction, the old script runs
// without error, counts its units from that TAT (without the fraction,
// and at its own rounded interval), and writes a value the new script
// reads. It catches a value format an old script cannot read (with
// ':' instead of '.', tonumber gives nil and every call errors).
func TestRoundedScriptReadsFractions(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	src, err := os.ReadFile("testdata/bucket_rounded.lua")
	require.NoError(t, err)
	old := goredis.NewScript(string(src))
	lim := core.Limit{Max: 750_000, Window: time.Second, Algorithm: core.TokenBucket}
	l := newLimiter(t, c, lim, WithExpirySlack(time.Hour))
	now := int64(1_764_979_200_000)
	_, err = l.AllowN(ctx, "upgrade", at(now), 1)
	require.NoError(t, err)
	key := l.Key("upgrade")
	v, err := c.Get(ctx, key).Result()
	require.NoError(t, err)
	require.Contains(t, v, ".", "one unit of 750,000 per second leaves no fraction: %q", v)
	for step := range 3 {
		// The old script's ARGV: now_ms, window_ms, max, n, commit, server_time, slack_ms.
		res, err := old.Run(ctx, c, []string{key}, now, lim.WindowMillis(), lim.Max, 2, 1, 0, 3_600_000).Int64Slice()
		require.NoError(t, err, "step %d: the old script on %q", step, v)
		require.Equal(t, int64(1), res[0], "step %d: the old script denied 2 units of a bucket nearly full: %v", step, res)
		written, err := c.Get(ctx, key).Result()
		require.NoError(t, err)
		whole, _, _ := strings.Cut(v, ".")
		require.Greater(t, written, whole, "step %d: the old script read %q and wrote %q, not 2 units later", step, v, written)
		d, err := l.AllowN(ctx, "upgrade", at(now), 1)
		require.NoError(t, err, "step %d: the new script after the old one wrote", step)
		require.True(t, d.Allowed, "step %d: %+v", step, d)
		v, err = c.Get(ctx, key).Result()
		require.NoError(t, err)
	}
}
