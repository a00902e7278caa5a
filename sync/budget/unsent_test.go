package budget

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scriptCalls is how many script calls (EVALSHA and EVAL) the private
// redis-server of rdb ran, by its own count (INFO commandstats).
func scriptCalls(t *testing.T, rdb *redis.Client) uint64 {
	t.Helper()
	n, _ := redistest.CommandStats(t, rdb, "evalsha", "eval")
	return uint64(n)
}

// TestUnsentCallsNotCounted: the Stats of a Limiter on a private Redis
// count the script calls Redis ran, call for call, through every path
// that plans a Call and then sends nothing because its caller's context
// had ended: a decision whose context was cancelled or whose deadline had
// passed, a Reset, a Sync and a Close whose deadline had passed. Each of
// those leaves Calls, Items and RoundTrips as they were; a decision and a
// Sync that go out count one round trip each, and the Sync that sent
// nothing did not put the Limiter down. Mutations it catches: counting a
// Call when it is planned and never taking it back (a round trip, a call
// and an item per request that left), taking back a Call that was sent,
// a Sync whose deadline had passed counting Redis down.
func TestUnsentCallsNotCounted(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	clk := core.NewManualClock(time.UnixMilli(w0 + 5))
	l, err := New(Config{PoP: "p", Incarnation: 1, Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2,
		FreeCredit: -1}, rdb, clk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close(ctx) })
	require.NoError(t, script.Load(ctx, rdb).Err(), "the script loaded: every call is one EVALSHA")
	base, ran := l.Stats(), scriptCalls(t, rdb)
	check := func(what string, calls, items, trips uint64) {
		t.Helper()
		s := l.Stats()
		assert.Equal(t, int(scriptCalls(t, rdb)-ran), int(s.Calls-base.Calls), "%s: Stats.Calls against the script calls Redis ran", what)
		assert.Equal(t, int(calls), int(s.Calls-base.Calls), "%s: calls", what)
		assert.Equal(t, int(items), int(s.Items-base.Items), "%s: items", what)
		assert.Equal(t, int(trips), int(s.RoundTrips-base.RoundTrips), "%s: round trips", what)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	late, cancelLate := context.WithDeadline(ctx, time.UnixMilli(1))
	defer cancelLate()

	d, err := l.AllowN(ctx, "a", clk.Now(), 1)
	require.NoError(t, err)
	require.Equal(t, core.SourceRedis, d.Source, "no free credit: decided at Redis")
	check("a decision sent", 1, 1, 1)

	_, err = l.AllowN(gone, "b", clk.Now(), 1)
	assertGone(t, err, "AllowN cancelled")
	check("a decision whose caller had left", 1, 1, 1)

	_, err = l.AllowN(late, "c", clk.Now(), 1)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "AllowN past its deadline")
	assert.ErrorIs(t, err, core.ErrUnavailable, "AllowN past its deadline: decided on the view")
	check("a decision past its deadline", 1, 1, 1)

	err = l.Reset(late, "a")
	assert.ErrorIs(t, err, context.DeadlineExceeded, "Reset past its deadline")
	assert.ErrorIs(t, err, core.ErrUnavailable, "Reset past its deadline")
	check("a Reset past its deadline", 1, 1, 1)

	err = l.Sync(late)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "Sync past its deadline")
	assert.False(t, l.m.Down(), "a Sync that sent nothing is no outage")
	check("a Sync past its deadline", 1, 1, 1)

	require.NoError(t, l.Sync(ctx))
	s := l.Stats()
	require.Greater(t, s.Calls-base.Calls, uint64(1), "the Sync had batches to send (the one past its deadline had them too)")
	check("a Sync sent", s.Calls-base.Calls, s.Items-base.Items, 2)

	assert.ErrorIs(t, l.Close(late), context.DeadlineExceeded, "Close past its deadline")
	check("a Close past its deadline", s.Calls-base.Calls, s.Items-base.Items, 2)
}

// TestUnsentTakesBackWhatWasCounted: Machine.Unsent takes a planned Call
// back out of Stats: a decision Call's call, item and round trip at once;
// of a Tick's two batches (one round trip), each its call and items, the
// round trip with the last; a second Unsent of a Call, and a Peek's Call
// (never counted), change nothing; a batch Finish kept after Unsent is
// counted again when the next Tick sends it. Mutations it catches: the
// round trip taken back with the first of a Tick's Calls, a Call taken
// back twice, an uncounted Call taken back (the counters wrap below 0), a
// batch sent again not counted.
func TestUnsentTakesBackWhatWasCounted(t *testing.T) {
	m := newTestMachine(t, func(c *Config) { c.Groups = 2; c.FreeCredit = -1 })
	now := int64(w0 + 5)
	var keys [2]string // one identity of each group
	for i := 0; keys[0] == "" || keys[1] == ""; i++ {
		k := "k" + strconv.Itoa(i)
		if g := m.group(m.bucket(k)); keys[g] == "" {
			keys[g] = k
		}
	}
	type counts struct{ calls, items, trips uint64 }
	stats := func() counts {
		s := m.Stats()
		return counts{s.Calls, s.Items, s.RoundTrips}
	}

	_, c := m.Request(now, keys[0], 1)
	require.NotNil(t, c, "no free credit: a decision Call")
	assert.Equal(t, counts{1, 1, 1}, stats(), "a decision Call planned")
	m.Unsent(c)
	assert.Equal(t, counts{}, stats(), "taken back")
	m.Unsent(c)
	assert.Equal(t, counts{}, stats(), "taken back once")
	m.Complete(now, c, nil, &CanceledError{Op: "budget script", Err: context.Canceled})
	_, p := m.Peek(now, keys[0])
	require.NotNil(t, p)
	m.Unsent(p)
	assert.Equal(t, counts{}, stats(), "a Peek's Call was never counted")

	x := int64(w0 / testWindow)
	for _, k := range keys {
		_, c := m.Request(now, k, 1)
		require.NotNil(t, c, k)
		m.Complete(now+1, c, &Result{Now: now, Window: x, Leased: x + 5, LeasedFrom: x, Items: []ItemResult{{Allowed: 1, CW: 1, Headroom: 5}}}, nil)
	}
	base := stats()
	calls := m.Tick(now + 100)
	require.Len(t, calls, 2, "a batch per group")
	items := uint64(len(calls[0].Items) + len(calls[1].Items))
	require.Positive(t, items)
	assert.Equal(t, counts{base.calls + 2, base.items + items, base.trips + 1}, stats(), "two batches, one round trip")
	m.Unsent(calls[0])
	assert.Equal(t, counts{base.calls + 1, base.items + uint64(len(calls[1].Items)), base.trips + 1}, stats(), "one batch taken back: the other still takes the round trip")
	m.Unsent(calls[1])
	assert.Equal(t, base, stats(), "both taken back, and their round trip")
	for _, c := range calls {
		m.Finish(c, nil, &CanceledError{Op: "budget sync", Err: context.Canceled})
	}
	again := m.Tick(now + 200)
	assert.ElementsMatch(t, calls, again, "the batches sent again")
	assert.Equal(t, counts{base.calls + 2, base.items + items, base.trips + 1}, stats(), "counted again when sent")
}
