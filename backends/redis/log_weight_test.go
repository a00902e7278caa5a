package redis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLogWeightIsOneDecision: a request of weight Max is one member of the
// exact log's sorted set, not Max of them.
func TestLogWeightIsOneDecision(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	const max = 200_000
	l := newLimiter(t, c, core.Limit{Max: max, Window: time.Hour, Algorithm: core.SlidingLog}, WithTimeout(time.Minute))
	d, err := l.AllowN(ctx, "heavy", at(1_764_979_200_000), max)
	require.NoError(t, err)
	require.True(t, d.Allowed)
	members, err := c.ZCard(ctx, l.Key("heavy")).Result()
	require.NoError(t, err)
	bytes, err := c.MemoryUsage(ctx, l.Key("heavy")).Result()
	require.NoError(t, err)
	assert.LessOrEqual(t, members, int64(1000), "one request of weight %d stored %d members (%d bytes)", max, members, bytes)
	units, total := logUnits(t, c, l.Key("heavy"))
	assert.Equal(t, int64(max), units, "the members hold %d units, want %d", units, max)
	assert.Equal(t, int64(max), total, "the total says %d units, want %d", total, max)
}

// TestLogReadsUnitMembers: a key written when the log stored one member per
// unit ("s:c", no total member) is read as those units, and later weighted
// requests on it, and their expiry, decide as core's log of the same units.
func TestLogReadsUnitMembers(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	lim := core.Limit{Max: 20, Window: time.Second, Algorithm: core.SlidingLog}
	l := newLimiter(t, c, lim, WithExpirySlack(time.Hour), WithTimeout(hammerTimeout))
	const t0 = int64(1_764_979_200_000)
	m := &model{limit: lim}
	var members []goredis.Z
	for _, u := range []struct{ at, units int64 }{{t0, 3}, {t0 + 100, 1}, {t0 + 400, 4}, {t0 + 700, 2}} {
		for k := int64(1); k <= u.units; k++ {
			members = append(members, goredis.Z{Score: float64(u.at), Member: fmt.Sprintf("%d:%d", u.at, k)})
		}
		m.decide(u.at, u.units, true)
	}
	require.NoError(t, c.ZAdd(ctx, l.Key("old"), members...).Err())
	require.NoError(t, c.PExpire(ctx, l.Key("old"), time.Hour).Err())
	steps := []struct {
		at, n  int64
		commit bool
	}{
		{t0 + 800, 1, false}, {t0 + 800, 11, true}, {t0 + 800, 1, true}, {t0 + 900, 5, false},
		{t0 + 1000, 1, false}, {t0 + 1000, 4, true}, {t0 + 1050, 9, true}, {t0 + 1400, 3, true},
		{t0 + 400, 1, false}, {t0 + 1700, 20, true}, {t0 + 2800, 20, true},
	}
	for i, s := range steps {
		want := m.decide(s.at, s.n, s.commit)
		var got core.Decision
		var err error
		if s.commit {
			got, err = l.AllowN(ctx, "old", at(s.at), s.n)
		} else {
			want = m.decide(s.at, 1, false)
			got, err = l.Peek(ctx, "old", at(s.at))
		}
		require.NoError(t, err, "step %d", i)
		require.True(t, sameDecision(got, want), "step %d %+v:\n redis %+v\n go    %+v", i, s, got, want)
	}
}

// TestLogLongHistoryAgrees: thousands of one-unit requests, one per ms,
// then weighted requests and peeks after part and all of them expire: the
// script reads its members in pages, and decides as core.
func TestLogLongHistoryAgrees(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	lim := core.Limit{Max: 2500, Window: 3 * time.Second, Algorithm: core.SlidingLog}
	l := newLimiter(t, c, lim, WithExpirySlack(time.Hour), WithTimeout(hammerTimeout))
	m := &model{limit: lim}
	now := int64(1_764_979_200_000)
	check := func(step string, n int64, commit bool) {
		t.Helper()
		var got core.Decision
		var err error
		if commit {
			got, err = l.AllowN(ctx, "long", at(now), n)
		} else {
			n = 1
			got, err = l.Peek(ctx, "long", at(now))
		}
		want := m.decide(now, n, commit)
		require.NoError(t, err, step)
		require.True(t, sameDecision(got, want), "%s now=%d n=%d commit=%v:\n redis %+v\n go    %+v", step, now, n, commit, got, want)
		units, total := logUnits(t, c, l.Key("long"))
		require.Equal(t, m.log.Units, total, "%s: the total member, want core's Units", step)
		require.Equal(t, units, total, "%s: the members hold %d units, the total says %d", step, units, total)
	}
	for i := 0; i < 2600; i++ {
		now++
		check(fmt.Sprintf("unit %d", i), 1, true)
	}
	check("heavy, denied", 2000, true)
	now += 2000 // 2,000 of the 2,500 expired
	check("peek, most expired", 1, false)
	check("heavy, denied, after a peek", 2200, false)
	check("heavy, after the trim", 1900, true)
	check("heavy, denied, walks the old units", 2500, true)
	now += 10_000
	check("peek, all expired", 1, false)
	check("full, after all expired", 2500, true)
}

// logUnits reads a log key as stored: the units its members hold ("s:c"
// one, "s:c:u" u) and the total its "#T" member claims (-1 when absent).
func logUnits(t testing.TB, c goredis.UniversalClient, key string) (units, total int64) {
	t.Helper()
	members, err := c.ZRange(context.Background(), key, 0, -1).Result()
	require.NoError(t, err, "ZRANGE %s", key)
	total = -1
	for _, m := range members {
		if rest, ok := strings.CutPrefix(m, "#"); ok {
			total, err = strconv.ParseInt(rest, 10, 64)
			require.NoError(t, err, "total member %q", m)
			continue
		}
		fields := strings.Split(m, ":")
		require.Contains(t, []int{2, 3}, len(fields), "member %q", m)
		u := int64(1)
		if len(fields) == 3 {
			u, err = strconv.ParseInt(fields[2], 10, 64)
			require.NoError(t, err, "member %q", m)
		}
		units += u
	}
	return units, total
}
