package main

import (
	"context"
	"time"

	"github.com/edgelimit/edgelimit/bench/peers"
	"github.com/edgelimit/edgelimit/sim/traffic"
	"github.com/edgelimit/edgelimit/sim/truth"
)

// callTimeout bounds one decision of the replay.
const callTimeout = 2 * time.Second

// scored is one limiter's run of a trace, judged by the ground truth.
type scored struct {
	truth.Result
	errors  int           // decisions that returned an error (not judged)
	cut     bool          // the run hit its deadline before the trace ended
	first   string        // the first error, when there were any
	maxLag  time.Duration // how far the replay fell behind the trace at worst
	elapsed time.Duration
}

// replay plays tr through w in real time from one goroutine, in trace
// order, each request at its PoP, starting at the next wall-clock boundary
// of the trace's window (so its boundary bursts fall on real window
// boundaries). Each decision is judged at the wall time it was sent, so the
// judge sees non-decreasing times.
func replay(ctx context.Context, tr *traffic.Trace, w peers.Weighted, key func(int32) string) scored {
	win := tr.Config.Window
	j := truth.New[int32](tr.Config.Limit, win)
	time.Sleep(time.Until(time.Now().Truncate(win).Add(win)))
	start := time.Now()
	var s scored
	for _, r := range tr.Requests {
		if ctx.Err() != nil {
			s.cut = true
			break
		}
		if d := time.Until(start.Add(r.At)); d > 0 {
			time.Sleep(d)
		} else {
			s.maxLag = max(s.maxLag, -d)
		}
		sent := time.Now()
		rctx, cancel := context.WithTimeout(ctx, callTimeout)
		ok, err := w(rctx, int(r.PoP), key(r.ID), int64(r.N))
		cancel()
		if err != nil {
			if s.errors == 0 {
				s.first = err.Error()
			}
			s.errors++
			continue
		}
		j.Observe(r.ID, sent.Sub(start).Milliseconds(), int64(r.N), ok)
	}
	s.elapsed = time.Since(start)
	s.Result = j.Result()
	return s
}
