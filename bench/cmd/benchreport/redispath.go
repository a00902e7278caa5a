package main

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/bench/peers"
	"github.com/edgelimit/edgelimit/core"
)

// redisMax and redisWindow make a policy every call of the Redis table is
// admitted under, so each script runs its counting path.
const (
	redisMax    = 1_000_000_000
	redisWindow = time.Minute
)

// redisSuffix ends the keys of the Redis table's policy (redis.Suffix), for
// redis-benchmark's and the bare socket's keys to match the limiters'.
var redisSuffix = redis.Suffix(core.PerWindow(redisMax, redisWindow))

// callerCounts are the concurrent callers of the Redis table's columns.
var callerCounts = []int{1, 8, 64}

// redisRow is one row of the Redis table and its figures per column.
type redisRow struct {
	contender
	figs  []figure  // per callerCounts
	trips []float64 // ours only: Redis round trips per decision, per column
	stats func() redis.Stats
	out   *outcome
}

// redisContenders builds every Go row of the Redis table on e's client.
func redisContenders(e *env) ([]*redisRow, error) {
	lim := core.PerWindow(redisMax, redisWindow)
	plain, err := redis.New(e.client, lim)
	if err != nil {
		return nil, err
	}
	piped, err := redis.New(e.client, lim, redis.WithPipelining(e.cfg.pipeWindow, e.cfg.pipeBatch))
	if err != nil {
		return nil, err
	}
	ulule, err := peers.UluleRedis(e.client, redisMax, redisWindow)
	if err != nil {
		return nil, err
	}
	rows := []*redisRow{
		{contender: contender{name: "edgelimit backends/redis, plain", role: "ours", d: peers.Ours(plain)}, stats: plain.Stats},
		{contender: contender{name: "edgelimit backends/redis, WithPipelining", role: "ours", d: peers.Ours(piped),
			note: fmt.Sprintf("window %s, maxBatch %d", e.cfg.pipeWindow, e.cfg.pipeBatch)}, stats: piped.Stats},
		{contender: contender{name: "go-redis/redis_rate/v10", role: "peer", d: peers.RedisRate(e.client, redisMax, redisWindow),
			note: "GCRA, Redis TIME"}},
		{contender: contender{name: "ulule/limiter/v3 Redis store", role: "peer", d: ulule, note: "fixed window"}},
	}
	for _, r := range rows {
		r.figs = make([]figure, len(callerCounts))
		r.trips = make([]float64, len(callerCounts))
		r.out = &outcome{}
	}
	return rows, nil
}

// redisTable is table 2: decisions per second at Redis with 1, 8 and 64
// concurrent callers, and redis-benchmark running our script on the same
// server in the same run.
func redisTable(ctx context.Context, e *env) (section, error) {
	rows, err := redisContenders(e)
	if err != nil {
		return nil, err
	}
	script := redis.Script(core.SlidingWindow)
	if err := script.Load(ctx, e.client).Err(); err != nil {
		return nil, err
	}
	rb := rbCommand{addr: e.redis.Addr, sha: script.Hash(), keyspace: len(e.keys.keys),
		key: redis.EncodeKey(redis.DefaultPrefix, "user:__rand_int__", redisSuffix),
		args: []string{strconv.FormatInt(time.Now().UnixMilli(), 10), strconv.FormatInt(redisWindow.Milliseconds(), 10),
			strconv.Itoa(redisMax), "1", "1", "0", "0"}}
	bare, closeBare, err := peers.RawEvalSha(e.redis.Addr, script.Hash(), func(id string) string {
		return redis.EncodeKey(redis.DefaultPrefix, id, redisSuffix)
	}, rb.args[1:])
	if err != nil {
		return nil, err
	}
	defer closeBare()
	rows = append(rows, &redisRow{contender: contender{name: "bare Go socket, EVALSHA sliding.lua (Go floor)", role: "floor",
		d: bare, note: "no client library: hand-written RESP, one connection per caller"}, out: &outcome{},
		figs: make([]figure, len(callerCounts)), trips: make([]float64, len(callerCounts))})
	for _, r := range rows { // warm the pool and load every script
		if err := warmRedis(ctx, r.d, e.keys); err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
	}
	raw := make([][][]testing.BenchmarkResult, len(rows))
	for i := range raw {
		raw[i] = make([][]testing.BenchmarkResult, len(callerCounts))
	}
	rbPlain := make([][]float64, len(callerCounts))
	rbPiped := make([][]float64, len(callerCounts))
	var rb50, rb50P []float64
	for round := 0; round < e.cfg.rounds; round++ {
		for ci, c := range callerCounts {
			for i, r := range rows {
				logf("  redis round %d: %d callers: %s", round+1, c, r.name)
				res, trips := measureRedis(r, e.keys, c)
				raw[i][ci] = append(raw[i][ci], res)
				if trips >= 0 {
					r.trips[ci] = trips
				}
			}
			// redis-benchmark sized to run about 3 benchtimes at our plain rate.
			ours := 1e9 / (float64(raw[0][ci][round].T.Nanoseconds()) / float64(raw[0][ci][round].N))
			n := max(1000, int(ours*3*e.cfg.benchtime.Seconds()))
			v, err := redisBenchmark(rb, rbRun{clients: c, pipeline: 1, requests: n})
			if err != nil {
				return nil, err
			}
			rbPlain[ci] = append(rbPlain[ci], v)
			if v, err = redisBenchmark(rb, rbRun{clients: c, pipeline: 32, requests: 4 * n}); err != nil {
				return nil, err
			}
			rbPiped[ci] = append(rbPiped[ci], v)
			if c == 64 {
				if v, err = redisBenchmark(rb, rbRun{clients: 50, pipeline: 1, requests: n}); err != nil {
					return nil, err
				}
				rb50 = append(rb50, v)
				if v, err = redisBenchmark(rb, rbRun{clients: 50, pipeline: 32, requests: 4 * n}); err != nil {
					return nil, err
				}
				rb50P = append(rb50P, v)
			}
		}
	}
	for i, r := range rows {
		for ci := range callerCounts {
			r.figs[ci] = medianOf(raw[i][ci])
		}
	}
	rbf := redisBenchFigures{plain: medians(rbPlain), piped: medians(rbPiped), c50: median(rb50), c50P: median(rb50P)}
	return func(d *doc) { renderRedis(d, e, rows, rbf) }, nil
}

// warmRedis sends a few hundred calls from 64 callers, so connections are
// open and scripts loaded before anything is timed.
func warmRedis(ctx context.Context, d peers.Decider, ks *keySet) error {
	errs := make(chan error, 64)
	for g := 0; g < 64; g++ {
		go func(g int) {
			var err error
			for i := 0; i < 8 && err == nil; i++ {
				_, err = d(ctx, ks.at(g*8+i))
			}
			errs <- err
		}(g)
	}
	for g := 0; g < 64; g++ {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

// measureRedis runs one row at c callers; for our rows it also returns the
// round trips per decision of the measured run (else -1).
func measureRedis(r *redisRow, ks *keySet, c int) (testing.BenchmarkResult, float64) {
	trips := -1.0
	loop := callersLoop(r.d, ks, c, r.out)
	res := testing.Benchmark(func(b *testing.B) {
		var before redis.Stats
		if r.stats != nil {
			before = r.stats()
		}
		loop(b)
		if r.stats != nil {
			after := r.stats()
			trips = float64(after.RoundTrips-before.RoundTrips) / float64(max(after.Calls-before.Calls, 1))
		}
	})
	return res, trips
}

// redisBenchFigures are the medians of the redis-benchmark runs.
type redisBenchFigures struct {
	plain, piped []float64 // per callerCounts: -c callers, -P 1 and -P 32
	c50, c50P    float64   // -c 50, -P 1 and -P 32: the goals' reference
}

func medians(v [][]float64) []float64 {
	out := make([]float64, len(v))
	for i := range v {
		out[i] = median(v[i])
	}
	return out
}
