package engine

import (
	"context"
	"fmt"
	"time"
)

// runner runs one mode over the whole trace.
type runner func(ctx context.Context, e *Env) (*outcome, error)

var runners = map[string]runner{
	"local":            runLocal,
	"redis":            runRedis,
	"redis-servertime": runRedisServerTime,
}

// honestRunners replace runners on the honest network (Env.Network); a
// mode without one (local: no network) runs the same on both.
var honestRunners = map[string]runner{
	"redis":            runRedisHonest,
	"redis-servertime": runRedisServerTimeHonest,
}

// Modes lists the modes in the order "all" runs them.
var Modes = []string{"redis", "local"}

// Variants lists the modes "all" runs only when they can differ from one of
// Modes: redis-servertime (pure Redis on Redis' clock) equals redis unless
// the PoPs' clocks are skewed.
var Variants = []string{"redis-servertime"}

// HonestModes lists the modes "all" runs after Modes on the honest
// network only (outside sweeps): budget and budget-gossip (sync/budget).
var HonestModes []string

// Experimental lists the modes "all" does not run, asked for by name
// (budget-nowait).
var Experimental []string

// Available reports whether mode can run in this build.
func Available(mode string) bool {
	_, ok := runners[mode]
	return ok
}

// Run plays the whole trace through mode and scores it. It refuses, before
// any work, faults (Env.Faults) that name a PoP the trace does not have or
// fall outside it.
func Run(ctx context.Context, e *Env, mode string) (Result, error) {
	run, ok := runners[mode]
	if !ok {
		return Result{}, fmt.Errorf("unknown mode %q", mode)
	}
	if h, ok := honestRunners[mode]; ok && !e.Ideal() {
		run = h
	}
	if run == nil {
		return Result{}, fmt.Errorf("mode %s runs only on the honest network", mode)
	}
	if e.Ideal() && e.Faults.Any() {
		return Result{}, fmt.Errorf("faults need the honest network (not -network ideal)")
	}
	if err := e.Faults.Validate(e.Trace.Config.PoPs); err != nil {
		return Result{}, fmt.Errorf("faults: %w", err)
	}
	if l := e.Faults.RedisLoss; l > 0 && l >= e.Trace.Duration {
		return Result{}, fmt.Errorf("redis loss at %v: past the trace's end (%v)", l, e.Trace.Duration)
	}
	began := time.Now()
	o, err := run(ctx, e)
	if err != nil {
		return Result{}, fmt.Errorf("mode %s: %w", mode, err)
	}
	r := e.score(mode, o)
	r.WallSeconds = time.Since(began).Seconds()
	return r, nil
}
