package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeyLayout(t *testing.T) {
	cases := map[string]string{
		"user:1":  "el:{k:user:1}:7",
		"a{b":     "el:{k:a{b}:7",
		"a}:5":    "el:{x:617d3a35}:7",
		"}":       "el:{x:7d}:7",
		"\x00 sp": "el:{k:\x00 sp}:7",
	}
	for id, want := range cases {
		got := Key("el", id, 7)
		assert.Equal(t, want, got, "Key(%q) = %q, want %q", id, got, want)
	}
	require.NotEqual(t, Key("el", "a", 3), Key("el", "a}:5", 3), "distinct identities share a key")
}

func TestFlushIsIdempotentAndMaxMerges(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	a := New(rdb, "el", "A", time.Minute)
	b := New(rdb, "el", "B", time.Minute)
	items := []Item{{Key: "u1", Index: 10, Own: [2]int64{5, 3}}, {Key: "u}2", Index: 10, Own: [2]int64{1, 0}}}
	for i := 0; i < 2; i++ {
		_, err := a.Flush(ctx, items)
		require.NoError(t, err)
	}
	stale := []Item{{Key: "u1", Index: 10, Own: [2]int64{2, 1}}}
	_, err := a.Flush(ctx, stale)
	require.NoError(t, err)
	res, err := b.Flush(ctx, []Item{{Key: "u1", Index: 10, Own: [2]int64{4, 0}}})
	require.NoError(t, err)
	got := res[0].Total(0)
	require.Equal(t, int64(9), got, "current total %d, want 5+4", got)
	got = res[0].Total(1)
	require.Equal(t, int64(3), got, "previous total %d, want 3", got)
	ttl := rdb.PTTL(ctx, Key("el", "u1", 10)).Val()
	require.Greater(t, ttl, time.Minute, "TTL %v, want about two windows", ttl)
	require.LessOrEqual(t, ttl, 2*time.Minute, "TTL %v, want about two windows", ttl)
}

func TestFlushReportsPriorForLossDetection(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	s := New(rdb, "el", "A", time.Minute)
	it := []Item{{Key: "k", Index: 1, Own: [2]int64{7, 0}}}
	s.Flush(ctx, it)
	rdb.FlushAll(ctx)
	res, err := s.Flush(ctx, it)
	require.NoError(t, err)
	require.Equal(t, int64(0), res[0].Prior[0], "prior %d after data loss, want 0", res[0].Prior[0])
	res, _ = s.Flush(ctx, it)
	require.Equal(t, int64(7), res[0].Prior[0], "prior %d, want 7", res[0].Prior[0])
}

func TestDecideMatchesCoreSlidingMath(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	a := New(rdb, "el", "A", time.Second)
	a.Flush(ctx, []Item{{Key: "k", Index: 5, Own: [2]int64{0, 8}}})
	lim := core.PerWindow(10, time.Second)
	var st core.WindowState
	st.Index, st.Cur = 4, 8
	admitted := 0
	for i := 0; i < 12; i++ {
		ok, r, err := a.Decide(ctx, DecideArgs{Item: Item{Key: "k", Index: 5}, N: 1, Max: 10, Elapsed: 500, WindowMillis: 1000})
		require.NoError(t, err)
		want := st.DecideSliding(lim, 5500, 1, true)
		require.Equal(t, want.Allowed, ok, "decision %d: redis %v, core %v", i, ok, want.Allowed)
		if ok {
			admitted++
			require.Equal(t, int64(admitted), r.Total(0), "current total %d, want %d", r.Total(0), admitted)
		}
	}
	require.Equal(t, 6, admitted, "admitted %d, want 6 (10 - 8*0.5)", admitted)
}

func TestDecideMergesPeersBeforeDeciding(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	a := New(rdb, "el", "A", time.Second)
	args := DecideArgs{Item: Item{Key: "k", Index: 1}, N: 1, Max: 5, WindowMillis: 1000,
		Peers: []Peer{{ID: "B", Counts: [2]int64{5, 0}}}}
	ok, r, err := a.Decide(ctx, args)
	require.NoError(t, err, "admitted over a peer's known count: ok=%v err=%v", ok, err)
	require.False(t, ok, "admitted over a peer's known count: ok=%v err=%v", ok, err)
	require.Equal(t, int64(5), r.Total(0), "peer count not merged: %d", r.Total(0))
}

func TestUnavailable(t *testing.T) {
	rdb, proc := redistest.Client(t)
	proc.Kill()
	s := New(rdb, "el", "A", time.Second)
	_, err := s.Flush(context.Background(), []Item{{Key: "k", Index: 1, Own: [2]int64{1, 0}}})
	require.ErrorIs(t, err, core.ErrUnavailable, "err %v, want ErrUnavailable", err)
}
