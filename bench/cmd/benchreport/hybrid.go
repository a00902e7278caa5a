package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/bench/peers"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/hybrid"
)

// hybridSync is how often the hybrid's background loop reconciles with
// Redis during table 3.
const hybridSync = 100 * time.Millisecond

// hybridCallers are the concurrent callers of table 3.
var hybridCallers = []int{1, 64}

// hybridRow is one row of table 3.
type hybridRow struct {
	contender
	callers int
	trips   func() uint64 // Redis round trips so far
	sync    func()        // hybrid only: one Sync, run once after the timed loop, untimed
	loop    bool          // run sync every hybridSync while timed, too
	raw     []testing.BenchmarkResult
	perK    float64 // round trips per 1,000 decisions in the last measured run
	local   float64 // share of decisions made locally, hybrid only
	stats   func() hybrid.Stats
	out     *outcome
}

// isHybrid reports whether the row is our hybrid (not a pure-Redis base).
func (r *hybridRow) isHybrid() bool { return r.role == "ours" || r.role == "ours-nosync" }

// hybridTable is table 3: the local-first hybrid on warm keys next to
// pure-Redis mode, with round trips per 1,000 decisions.
func hybridTable(ctx context.Context, e *env) (section, error) {
	lim := core.PerWindow(redisMax, redisWindow)
	node, err := hybrid.New(hybrid.Config{PoP: "bench-hybrid", Limit: lim, Redis: e.client, Margin: 0.1,
		Capacity: 2 * len(e.keys.keys), Resync: -1})
	if err != nil {
		return nil, err
	}
	defer node.Close(context.Background())
	coarse, err := core.NewCoarseClock(time.Millisecond)
	if err != nil {
		return nil, err
	}
	defer coarse.Stop()
	nodeCoarse, err := hybrid.New(hybrid.Config{PoP: "bench-hybrid-coarse", Limit: lim, Redis: e.client, Margin: 0.1,
		Capacity: 2 * len(e.keys.keys), Resync: -1, Clock: coarse})
	if err != nil {
		return nil, err
	}
	defer nodeCoarse.Close(context.Background())
	for _, n := range []*hybrid.Node{node, nodeCoarse} {
		if err := warmHybrid(ctx, n, e.keys.keys); err != nil {
			return nil, err
		}
	}
	plain, err := redis.New(e.client, lim)
	if err != nil {
		return nil, err
	}
	piped, err := redis.New(e.client, lim, redis.WithPipelining(e.cfg.pipeWindow, e.cfg.pipeBatch))
	if err != nil {
		return nil, err
	}
	nodeTrips := func() uint64 { return node.Stats().RedisRoundTrips }
	sync := func() { _ = node.Sync(context.Background(), time.Now()) } // errors show as round trips in Stats
	coarseTrips := func() uint64 { return nodeCoarse.Stats().RedisRoundTrips }
	coarseSync := func() { _ = nodeCoarse.Sync(context.Background(), time.Now()) }
	var rows []*hybridRow
	for _, c := range hybridCallers {
		rows = append(rows,
			&hybridRow{contender: contender{name: "edgelimit sync/hybrid", role: "ours", d: peers.Ours(node),
				note: fmt.Sprintf("Margin 0.1, Sync every %s, batches of %d", hybridSync, hybrid.DefaultBatchSize)},
				callers: c, trips: nodeTrips, sync: sync, loop: true, stats: node.Stats},
			&hybridRow{contender: contender{name: "edgelimit sync/hybrid, CoarseClock", role: "ours", d: peers.Ours(nodeCoarse),
				note: fmt.Sprintf("Margin 0.1, Sync every %s, Clock core.NewCoarseClock(time.Millisecond)", hybridSync)},
				callers: c, trips: coarseTrips, sync: coarseSync, loop: true, stats: nodeCoarse.Stats},
			&hybridRow{contender: contender{name: "edgelimit sync/hybrid", role: "ours-nosync", d: peers.Ours(node),
				note: "no Sync while timed, one Sync after, counted"},
				callers: c, trips: nodeTrips, sync: sync, stats: node.Stats},
			&hybridRow{contender: contender{name: "edgelimit backends/redis, plain (pure-Redis)", role: "base", d: peers.Ours(plain)},
				callers: c, trips: func() uint64 { return plain.Stats().RoundTrips }})
	}
	rows = append(rows, &hybridRow{contender: contender{name: "edgelimit backends/redis, WithPipelining (pure-Redis)",
		role: "base-piped", d: peers.Ours(piped)}, callers: 64, trips: func() uint64 { return piped.Stats().RoundTrips }})
	for _, r := range rows {
		r.out = &outcome{}
	}
	for round := 0; round < e.cfg.rounds; round++ {
		for _, r := range rows {
			logf("  hybrid round %d: %d callers: %s", round+1, r.callers, r.name)
			r.raw = append(r.raw, measureHybrid(r, e.keys))
		}
	}
	logf("  hybrid: Redis stall during one Sync of every identity (SyncShare %.1f)", hybrid.DefaultSyncShare)
	st, err := measureStall(ctx, node, peers.Ours(plain), e.keys, e.cfg.benchtime)
	if err != nil {
		return nil, fmt.Errorf("stall: %w", err)
	}
	st.share = hybrid.DefaultSyncShare
	logf("  hybrid: the same with SyncShare 1 (no pause between batches)")
	unpaced, err := hybrid.New(hybrid.Config{PoP: "bench-unpaced", Limit: lim, Redis: e.client,
		Capacity: 2 * len(e.keys.keys), Resync: -1, SyncShare: 1})
	if err != nil {
		return nil, err
	}
	defer unpaced.Close(context.Background())
	st1, err := measureStall(ctx, unpaced, peers.Ours(plain), e.keys, e.cfg.benchtime)
	if err != nil {
		return nil, fmt.Errorf("stall, unpaced: %w", err)
	}
	st1.share = 1
	for _, r := range rows { // the report needs figures only: let the node go before the next table
		r.d, r.trips, r.sync, r.stats = nil, nil, nil, nil
	}
	return func(d *doc) { renderHybrid(d, e, rows, []stall{st, st1}) }, nil
}

// warmHybrid decides once on every key and syncs, so the timed runs meet
// warm views with nothing pending.
func warmHybrid(ctx context.Context, n *hybrid.Node, keys []string) error {
	for _, k := range keys {
		if _, err := n.Allow(ctx, k); err != nil {
			return fmt.Errorf("hybrid warm: %w", err)
		}
	}
	if err := n.Sync(ctx, time.Now()); err != nil {
		return fmt.Errorf("hybrid sync: %w", err)
	}
	return nil
}

// every runs f every d in a goroutine until the returned stop is called;
// stop returns once f is no longer running. It is the hybrid's background
// sync loop (hybrid.Node.Start's), owned by the measurement so that no Sync
// is still running when the next row starts.
func every(d time.Duration, f func()) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				f()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// measureHybrid times one row and records its round trips per 1,000
// decisions (and local share) from the last, measured, invocation.
func measureHybrid(r *hybridRow, ks *keySet) testing.BenchmarkResult {
	loop := callersLoop(r.d, ks, r.callers, r.out)
	return testing.Benchmark(func(b *testing.B) {
		t0 := r.trips()
		var s0 hybrid.Stats
		if r.stats != nil {
			s0 = r.stats()
		}
		var stop func()
		if r.loop {
			stop = every(hybridSync, r.sync)
		}
		loop(b)
		b.StopTimer()
		if stop != nil {
			stop() // waits for a Sync in progress, so the next row runs on an idle Redis
		}
		if r.sync != nil {
			r.sync()
		}
		r.perK = float64(r.trips()-t0) * 1000 / float64(b.N)
		if r.stats != nil {
			s := r.stats()
			r.local = float64(s.LocalDecisions-s0.LocalDecisions) / float64(b.N)
		}
	})
}
