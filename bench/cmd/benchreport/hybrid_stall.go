package main

import (
	"context"
	"time"

	"github.com/edgelimit/edgelimit/bench/peers"
	"github.com/edgelimit/edgelimit/sync/hybrid"
)

// stall is what one hybrid Sync of every warm identity costs the other
// clients of the same Redis.
type stall struct {
	identities int
	took       time.Duration // the Sync's wall time
	trips      uint64        // its round trips (batches)
	alone      float64       // plain decisions/s from one caller, Redis otherwise idle
	during     float64       // the same while the Sync runs
	share      float64       // the Node's Config.SyncShare
}

// measureStall marks every key dirty on node, then times plain decisions
// from one caller, first alone for the benchtime and then while one Sync
// flushes them all.
func measureStall(ctx context.Context, node *hybrid.Node, plain peers.Decider, ks *keySet, benchtime time.Duration) (stall, error) {
	for _, k := range ks.keys {
		if _, err := node.Allow(ctx, k); err != nil {
			return stall{}, err
		}
	}
	s := stall{identities: len(ks.keys)}
	var err error
	if s.alone, err = rateUntil(ctx, plain, ks, func(t time.Duration) bool { return t >= benchtime }); err != nil {
		return s, err
	}
	t0 := node.Stats().RedisRoundTrips
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		err := node.Sync(ctx, time.Now())
		s.took = time.Since(start)
		done <- err
	}()
	var syncErr error
	finished := false
	s.during, err = rateUntil(ctx, plain, ks, func(time.Duration) bool {
		select {
		case syncErr = <-done:
			finished = true
		default:
		}
		return finished
	})
	if !finished {
		syncErr = <-done
	}
	s.trips = node.Stats().RedisRoundTrips - t0
	if err == nil {
		err = syncErr
	}
	return s, err
}

// rateUntil calls d serially until stop says so and returns calls per second.
func rateUntil(ctx context.Context, d peers.Decider, ks *keySet, stop func(elapsed time.Duration) bool) (float64, error) {
	start := time.Now()
	n := 0
	for !stop(time.Since(start)) {
		if _, err := d(ctx, ks.at(n)); err != nil {
			return 0, err
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
