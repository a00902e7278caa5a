package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/bench/peers"
	"github.com/edgelimit/edgelimit/core"
)

// hotMax and hotWindow make a policy every call of the in-process table is
// admitted under, so each limiter runs its counting path, never a deny.
const (
	hotMax    = 1 << 30
	hotWindow = 24 * time.Hour
)

// contender is one row of a throughput table.
type contender struct {
	name  string
	note  string
	role  string // "ours", "peer" or "floor"
	d     peers.Decider
	close func()
}

// localContenders builds and warms every row of the in-process table.
func localContenders(ctx context.Context, e *env) ([]*contender, error) {
	ours, err := local.New(core.PerWindow(hotMax, hotWindow))
	if err != nil {
		return nil, err
	}
	coarse, err := core.NewCoarseClock(time.Millisecond)
	if err != nil {
		return nil, err
	}
	oursCoarse, err := local.New(core.PerWindow(hotMax, hotWindow), local.WithClock(coarse))
	if err != nil {
		return nil, err
	}
	seth, sethClose, err := peers.SethvargoMemory(hotMax, hotWindow)
	if err != nil {
		return nil, err
	}
	floor, err := peers.BareLRU(e.keys.keys)
	if err != nil {
		return nil, err
	}
	cs := []*contender{
		{name: "edgelimit backends/local (sliding window)", role: "ours", d: peers.Ours(ours)},
		{name: "edgelimit backends/local, CoarseClock", role: "ours", d: peers.Ours(oursCoarse), close: coarse.Stop,
			note: "sliding window, WithClock(core.NewCoarseClock(time.Millisecond)): the time is one atomic load"},
		{name: "x/time/rate, map + sync.Mutex", role: "peer", d: peers.XRateMutex(hotMax, hotWindow)},
		{name: "x/time/rate, sync.Map", role: "peer", d: peers.XRateSyncMap(hotMax, hotWindow)},
		{name: "sethvargo/go-limiter memorystore", role: "peer", d: seth, close: sethClose},
		{name: "ulule/limiter/v3 memory store", role: "peer", d: peers.UluleMemory(hotMax, hotWindow)},
		{name: "go.uber.org/ratelimit, map + sync.Mutex", role: "peer", d: peers.UberPacer(1e9),
			note: "a pacer: Take blocks, never denies; 1e9/s so it never waits"},
		{name: "bare golang-lru/v2 Cache.Get (floor)", role: "floor", d: floor,
			note: "no decision, one lock for the whole cache"},
	}
	for _, c := range cs {
		for _, k := range e.keys.keys {
			if _, err := c.d(ctx, k); err != nil {
				return nil, fmt.Errorf("%s: warm: %w", c.name, err)
			}
		}
	}
	return cs, nil
}

// localTable is table 1: the in-process hot path, serial and parallel.
func localTable(ctx context.Context, e *env) (section, error) {
	cs, err := localContenders(ctx, e)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, c := range cs {
			if c.close != nil {
				c.close()
			}
			c.d, c.close = nil, nil // the report needs names only: let the limiters go before the next table
		}
	}()
	serial := make([][]testing.BenchmarkResult, len(cs))
	par := make([][]testing.BenchmarkResult, len(cs))
	outs := make([]*outcome, len(cs))
	for i := range outs {
		outs[i] = &outcome{}
	}
	for r := 0; r < e.cfg.rounds; r++ {
		for i, c := range cs {
			logf("  local round %d: %s", r+1, c.name)
			serial[i] = append(serial[i], testing.Benchmark(serialLoop(c.d, e.keys, outs[i])))
			par[i] = append(par[i], testing.Benchmark(parallelLoop(c.d, e.keys, outs[i])))
		}
	}
	figs := make([][2]figure, len(cs))
	for i := range cs {
		figs[i] = [2]figure{medianOf(serial[i]), medianOf(par[i])}
	}
	return func(d *doc) { renderLocal(d, e, cs, figs, outs) }, nil
}
