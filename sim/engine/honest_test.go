package engine

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sim/natsembed"
	"github.com/edgelimit/edgelimit/sim/netmodel"
	"github.com/edgelimit/edgelimit/sim/traffic"
	goredis "github.com/redis/go-redis/v9"

	"github.com/stretchr/testify/require"
)

// handTrace is a trace of one identity (id0) over two PoPs, PoP 0 beside
// Redis (round trip 0) and PoP 1 across the world (300 ms: 150 ms each
// way), with no jitter, on a real Redis.
func handTrace(t *testing.T, limit int64, reqs []traffic.Request) (*Env, *goredis.Client) {
	t.Helper()
	rdb, p := redistest.Client(t)
	c := traffic.Config{Scenario: "hand", PoPs: 2, Identities: 1, Requests: len(reqs),
		Limit: limit, Window: 10 * time.Second, Seed: 1}
	tr := &traffic.Trace{Config: c, Duration: 2 * time.Second, Requests: reqs}
	net, err := netmodel.WorldWide(2, 0, 300*time.Millisecond)
	require.NoError(t, err)
	e := NewEnv(tr, net)
	e.RedisAddr, e.Namespace, e.Jitter = p.Addr, t.Name(), 0
	return e, rdb
}

// TestSyncReplyAppliedAtArrival: a Sync's reply from the PoP 150 ms from
// Redis changes its view 300 ms after its tick (150 ms to Redis, 150 ms
// back), not before; on the ideal network it would at the tick.
func TestSyncReplyAppliedAtArrival(t *testing.T) {
	var reqs []traffic.Request
	for i := range 50 {
		reqs = append(reqs, traffic.Request{At: time.Duration(1+i) * time.Millisecond, PoP: 0, N: 1})
	}
	reqs = append(reqs, traffic.Request{At: 120 * time.Millisecond, PoP: 1, N: 1})
	e, _ := handTrace(t, 100, reqs)
	h, err := e.startHonest(context.Background(), false)
	require.NoError(t, err)
	defer h.s.close()
	err = h.play()
	require.NoError(t, err)
	// PoP 0 ticks at 0, 100 ms, ... (its batch lands at once); PoP 1 at
	// 50, 150 ms, ...: its 150 ms batch reaches Redis at 300 and returns at 450.
	view := func(at time.Duration) int64 {
		err := h.runUntil(at)
		require.NoError(t, err)
		cur, _ := h.s.pops[1].node.Counts(e.Key(0), e.Clock(1, at))
		return cur
	}
	got := view(449 * time.Millisecond)
	require.EqualValues(t, 1, got, "PoP 1's view at 449 ms counts %d, want 1 (its reply still on the way)", got)
	got = view(450 * time.Millisecond)
	require.EqualValues(t, 51, got, "PoP 1's view at 450 ms counts %d, want 51 (the reply has arrived)", got)
}

// TestRedisOrdersCallsByArrival: with every request decided at Redis, the
// far PoP's earlier request reaches Redis after the near PoP's later one,
// so Redis admits the near one (limit 1) and the far one is denied, and
// answered a whole round trip (300 ms) after it was made.
func TestRedisOrdersCallsByArrival(t *testing.T) {
	reqs := []traffic.Request{{At: 0, PoP: 1, N: 1}, {At: 100 * time.Millisecond, PoP: 0, N: 1}}
	for _, mode := range []string{"hybrid-nogossip", "redis"} {
		e, _ := handTrace(t, 1, reqs)
		e.Namespace += mode
		e.Margin = 0.5 // 1 unit of 1 is always within the margin: every request goes to Redis
		run := honestRunners[mode]
		o, err := run(context.Background(), e)
		require.NoError(t, err)
		require.False(t, o.allowed[0] || !o.allowed[1], "%s: allowed = %v; want the far (earlier) request denied, the near one admitted", mode, o.allowed)
		require.False(t, o.latency[0] != 300*time.Millisecond || o.latency[1] != 0, "%s: latencies %v, want 300ms and 0", mode, o.latency)
	}
}

// faultEnv is a small generated trace on the honest network with faults.
func faultEnv(t *testing.T, f netmodel.Faults) *Env {
	t.Helper()
	e := testEnv(t, "mixed")
	_, p := redistest.Client(t)
	e.RedisAddr, e.Faults, e.Margin = p.Addr, f, 0.1
	return e
}

// TestOutageThenRedisHoldsEveryHit: during a Redis outage the hybrid's
// calls are refused (each Redis-decided request falls back to a counted
// local decision), and once it ends Redis holds every unit any PoP
// admitted, bar the documented loss: the units of windows that closed more
// than one window before the outage ended had left the views before any
// Sync could send them (an outage within one window loses nothing). Pure
// Redis, failing open, admits units it never counts.
func TestOutageThenRedisHoldsEveryHit(t *testing.T) {
	for _, out := range []netmodel.Span{
		{Start: 2100 * time.Millisecond, Dur: 700 * time.Millisecond}, // inside window 2
		{Start: 2 * time.Second, Dur: 2 * time.Second},                // windows 2 and 3
	} {
		e := faultEnv(t, netmodel.Faults{RedisOutage: out})
		e.Namespace += out.String()
		h, err := e.startHonest(context.Background(), false)
		require.NoError(t, err)
		err = h.play()
		require.NoError(t, err)
		o, err := h.finish()
		require.NoError(t, err)
		var errs, fallbacks uint64
		for _, p := range h.s.pops {
			st := p.node.Stats()
			errs, fallbacks = errs+st.RedisErrors, fallbacks+st.FallbackLocal
		}
		h.s.close()
		require.False(t, errs == 0 || fallbacks == 0, "outage %s: %d refused calls, %d local fallbacks; want both > 0", out, errs, fallbacks)
		// The bound: units admitted in windows older than the one before
		// the window the outage ends in.
		w := e.Limit.Window
		var bound int64
		for i, r := range e.Trace.Requests {
			if o.allowed[i] && r.At/w < out.End()/w-1 && r.At >= out.Start-w {
				bound += int64(r.N)
			}
		}
		require.False(t, o.lost > bound || (out.Dur < w && o.lost != 0), "outage %s: Redis misses %d admitted units, bound %d", out, o.lost, bound)
		r, err := runRedisHonest(context.Background(), e)
		require.NoError(t, err)
		require.NotEqualValues(t, 0, r.lost, "outage %s: pure Redis failed open through it yet lost nothing", out)
	}
}

// TestCrashLossMatchesReport: the units a crashed PoP admitted and Redis
// never got, counted here from the decisions and a SCAN of Redis, equal
// the report's figure for that crash, and are more than none.
func TestCrashLossMatchesReport(t *testing.T) {
	crash := netmodel.Crash{PoP: 1, At: 2500 * time.Millisecond}
	e := faultEnv(t, netmodel.Faults{Crashes: []netmodel.Crash{crash}})
	e.Margin, e.SyncInterval = 0, time.Second // no Redis-decided request; much unflushed at the crash
	h, err := e.startHonest(context.Background(), false)
	require.NoError(t, err)
	defer h.s.close()
	err = h.play()
	require.NoError(t, err)
	o, err := h.finish()
	require.NoError(t, err)
	var admitted int64
	for i, r := range e.Trace.Requests {
		if int(r.PoP) == crash.PoP && r.At < crash.At && o.allowed[i] {
			admitted += int64(r.N)
		}
	}
	held := fieldSum(t, e, h.dead[0].ID())
	require.False(t, len(o.crashLost) != 1 || o.crashLost[0] != admitted-held || admitted-held <= 0, "crash lost: report %v, decisions %d - Redis %d = %d; want equal and > 0", o.crashLost, admitted, held, admitted-held)
	require.Equal(t, o.crashLost[0], o.lost, "lost %d in all, %d by the crash: the live PoPs lost units too", o.lost, o.crashLost[0])
}

// fieldSum is field's total over every hash of e's namespace, by SCAN.
func fieldSum(t *testing.T, e *Env, field string) int64 {
	t.Helper()
	client, _ := e.countedClient(1)
	defer client.Close()
	ctx := context.Background()
	var sum int64
	iter := client.Scan(ctx, 0, e.Namespace+":{*", 1000).Iterator()
	for iter.Next(ctx) {
		v, err := client.HGet(ctx, iter.Val(), field).Result()
		if err == goredis.Nil {
			continue
		}
		require.NoError(t, err)
		n, _ := strconv.ParseInt(v, 10, 64)
		sum += n
	}
	err := iter.Err()
	require.NoError(t, err)
	return sum
}

// TestGossipFaultsLeaveCountsExact: gossip lost, duplicated and reordered
// (jitter 1) never makes a view count more than was admitted, and once
// delivery settles (a last gossip and flush, as Close does) every PoP's
// view of every identity equals what all PoPs admitted in that window.
func TestGossipFaultsLeaveCountsExact(t *testing.T) {
	for _, f := range []netmodel.Faults{{GossipDup: 0.5}, {GossipLoss: 0.3, GossipDup: 0.3}} {
		e := faultEnv(t, f)
		e.Namespace += strconv.Itoa(int(f.GossipLoss * 10))
		e.Jitter, e.Margin = 1, 0
		ns, err := natsembed.Start()
		require.NoError(t, err)
		e.NATSURL = ns.URL()
		h, err := e.startHonest(context.Background(), true)
		require.NoError(t, err)
		err = h.play()
		require.NoError(t, err)
		_, err = h.finish()
		require.NoError(t, err)
		end := e.Trace.Duration // the views are in the window after the trace's last
		truth := map[int32]int64{}
		for k, n := range h.ledger.units {
			if k.win == e.Clock(0, end).UnixMilli()/e.Limit.WindowMillis()-1 {
				truth[k.id] += n
			}
		}
		checked := 0
		for p, pp := range h.s.pops {
			for id, want := range truth {
				_, got := pp.node.Counts(e.Key(id), e.Clock(p, end))
				// Where the truth is within the limit, the gossip cap (one limit
				// above what Redis reported) cannot have clamped a claim.
				exact := f.GossipLoss == 0 && want <= e.Limit.Max
				require.False(t, got > want || (exact && got != want), "%+v: PoP %d counts %d of id%d, truth %d", f, p, got, id, want)
				checked++
			}
		}
		require.NotEqualValues(t, 0, checked, "no identity in the last window")
		h.s.close()
		ns.Stop()
	}
}

// TestEscrowModeNeverWaits: hybrid-escrow decides every request without
// waiting for Redis (added latency 0 at p99), its round trips are its
// Syncs alone (at most one per PoP per tick), and it counts globally: its
// worst identity gets less than each PoP alone lets through. (At this
// small scale, a 1 s window with Syncs every 100 ms and round trips up to
// 150 ms, its worst identity gets more than pure Redis': the far-below
// rule's stale views, which escrow does not cover; docs/tradeoffs.md §4.)
func TestEscrowModeNeverWaits(t *testing.T) {
	rs := map[string]Result{}
	for _, mode := range []string{"hybrid-escrow", "redis", "local"} {
		e := faultEnv(t, netmodel.Faults{})
		e.Trace, _ = traffic.Generate(traffic.Config{Scenario: "near-limit", PoPs: 4, Identities: 300,
			Requests: 6000, Limit: 20, Window: time.Second, Seed: 5})
		e.Namespace += mode
		ns, err := natsembed.Start()
		require.NoError(t, err)
		e.NATSURL = ns.URL()
		r, err := Run(context.Background(), e, mode)
		ns.Stop()
		require.NoError(t, err)
		rs[mode] = r
	}
	esc, red, loc := rs["hybrid-escrow"], rs["redis"], rs["local"]
	ticks := int64(4 * 6 * time.Second / (100 * time.Millisecond)) // 4 PoPs, 6 windows of 1 s
	require.False(t, esc.AddedLatencyP99Ms != 0 || esc.RedisRoundTrips > ticks, "escrow waited (p99 %.1f ms) or made %d round trips for %d ticks", esc.AddedLatencyP99Ms, esc.RedisRoundTrips, ticks)
	require.False(t, esc.MaxOveradmission >= loc.MaxOveradmission, "escrow worst over-admission %.2f, each PoP alone %.2f", esc.MaxOveradmission, loc.MaxOveradmission)
	t.Logf("escrow: error %.2f%% worst %.2f saved %.1f%%; redis: error %.2f%% worst %.2f; local: worst %.2f",
		esc.DecisionErrorPct, esc.MaxOveradmission, esc.RoundTripsSavedPct, red.DecisionErrorPct, red.MaxOveradmission,
		loc.MaxOveradmission)
}

// TestRedisClockUndoesSkew: PoP clocks spread over ±400 ms on a 1 s
// window put the hybrid's decisions in the wrong windows; with each PoP
// learning its offset to Redis' clock from its Syncs
// (hybrid.Config.RedisClock) its figures come back to those of the same
// hybrid with no skew at all.
func TestRedisClockUndoesSkew(t *testing.T) {
	rs := map[string]Result{}
	for _, run := range []struct {
		name  string
		skew  time.Duration
		clock bool
	}{{"skewed", 400 * time.Millisecond, false}, {"redisclock", 400 * time.Millisecond, true}, {"noskew", 0, false}} {
		e := faultEnv(t, netmodel.Faults{})
		e.Namespace += run.name
		e.Skew = netmodel.Skews(e.Trace.Config.PoPs, run.skew, 3)
		e.RedisClock = run.clock
		r, err := Run(context.Background(), e, "hybrid-nogossip")
		require.NoError(t, err)
		rs[run.name] = r
		t.Logf("%s: error %.2f%%, worst %.2f, lost %d", run.name, r.DecisionErrorPct, r.MaxOveradmission, r.LostHits)
	}
	skewed, fixed, none := rs["skewed"], rs["redisclock"], rs["noskew"]
	require.False(t, fixed.DecisionErrorPct > none.DecisionErrorPct+0.5 || fixed.DecisionErrorPct >= skewed.DecisionErrorPct ||
		fixed.MaxOveradmission > none.MaxOveradmission+0.05 || fixed.LostHits != 0,
		"with the Redis clock: error %.2f%%, worst %.2f, lost %d; skewed %.2f%%; no skew %.2f%%, worst %.2f",
		fixed.DecisionErrorPct, fixed.MaxOveradmission, fixed.LostHits, skewed.DecisionErrorPct,
		none.DecisionErrorPct, none.MaxOveradmission)
}
