package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/sim/engine"
	"github.com/edgelimit/edgelimit/sim/netmodel"
	"github.com/edgelimit/edgelimit/sim/report"
	"github.com/edgelimit/edgelimit/sim/traffic"
	"github.com/edgelimit/edgelimit/sync/budget"
)

// execute does the work the flags ask for and prints the report.
func (o *options) execute(ctx context.Context, stdout, stderr io.Writer) error {
	if o.tf.write != "" {
		return o.writeTrace(stdout)
	}
	stop, err := o.startProfile()
	if err != nil {
		return err
	}
	defer stop()
	srv, err := o.startServers()
	if err != nil {
		return err
	}
	defer srv.stop()
	if o.cfg.Scenario == "article" {
		return o.article(ctx, srv, stdout)
	}
	rep, err := o.simulate(ctx, srv, stderr)
	if err != nil {
		return err
	}
	return o.output(rep, stdout)
}

// simulate runs every mode that runs once, then the sweep (planJobs):
// one after the other on one trace generated once (runTogether), or
// -parallel at a time, each in a pop-sim process of its own (runApart).
func (o *options) simulate(ctx context.Context, srv *servers, stderr io.Writer) (report.Report, error) {
	net, err := netmodel.WorldWide(o.cfg.PoPs, o.rttMin, o.rttMax)
	if err != nil {
		return report.Report{}, err
	}
	jobs, points := o.planJobs()
	bar := newProgress(stderr, 0, o.progressLines)
	defer bar.done()
	var res []engine.Result
	var run *report.Run
	var ref *engine.Result
	if n := o.workers(len(jobs)); n > 1 {
		res, ref, run, err = o.runApart(ctx, n, jobs, bar)
	} else {
		res, ref, run, err = o.runTogether(ctx, jobs, net, srv, bar)
	}
	rep := o.newReport(run.Requests)
	rep.Run, rep.Reference = run, ref
	for i, r := range res {
		if points[i] == nil {
			rep.Results = append(rep.Results, r)
			continue
		}
		p := *points[i]
		p.Result = r
		rep.Sweep = append(rep.Sweep, p)
	}
	rep.Notes = append(rep.Notes, budgetNotes(rep)...)
	return rep, err
}

// runTogether generates the trace once and runs jobs on it one after the
// other, in this process, on srv's Redis; it returns their results and
// the reference's row on the trace (nil when a sweep point changes the
// trace: crowd-span).
func (o *options) runTogether(ctx context.Context, jobs []job, net netmodel.Model,
	srv *servers, bar *progress) ([]engine.Result, *engine.Result, *report.Run, error) {
	began := time.Now()
	tr, err := o.theTrace()
	if err != nil {
		return nil, nil, &report.Run{Parallel: 1}, err
	}
	var ref *engine.Result
	if !o.sweepSpec.changesTrace() {
		r := engine.Reference(engine.NewEnv(tr, net))
		ref = &r
	}
	bar.setTotal(len(tr.Requests))
	res := make([]engine.Result, 0, len(jobs))
	for k, j := range jobs {
		jt := tr
		if j.o != o && o.sweepSpec.changesTrace() {
			if jt, err = j.o.theTrace(); err != nil {
				return res, ref, runOf(1, len(tr.Requests), began, res), err
			}
		}
		r, err := j.o.runMode(ctx, jt, net, srv, j.mode, bar, k == len(jobs)-1)
		if err != nil {
			return res, ref, runOf(1, len(tr.Requests), began, res), err
		}
		res = append(res, r)
	}
	return res, ref, runOf(1, len(tr.Requests), began, res), nil
}

// runOf is the run's own figures when its modes ran one at a time: the
// peak is the highest mode's (each measured its own).
func runOf(parallel, requests int, began time.Time, res []engine.Result) *report.Run {
	run := &report.Run{Parallel: parallel, Requests: requests, WallSeconds: time.Since(began).Seconds()}
	for _, r := range res {
		run.PeakRSSMB = max(run.PeakRSSMB, r.PeakRSSMB)
	}
	return run
}

// newReport is the report's header for a trace of requests.
func (o *options) newReport(requests int) report.Report {
	c := o.cfg
	return report.Report{Scenario: c.Scenario, Seed: c.Seed, PoPs: c.PoPs,
		Identities: c.Identities, Requests: requests, Limit: c.Limit,
		WindowMs: c.Window.Milliseconds(), SyncIntervalMs: o.syncInterval.Milliseconds(),
		ClockSkewMs: o.clockSkew.Milliseconds(), Notes: notes(o),
		Network: o.net.network, Jitter: o.net.jitter}
}

// notes explain, under the table and in the JSON, how the figures are
// counted.
func notes(o *options) []string {
	n := []string{
		"errors are judged against the exact log of what each mode admitted, over all PoPs",
		"redis: one EVALSHA per decision, counted as one round trip each; the simulator pipelines different identities' calls only to finish sooner",
		latencyNote(o),
		"round trips saved are against pure-Redis mode on the same trace (one per decision)",
	}
	if o.net.network == "honest" {
		n = append(n, "lost: units admitted that Redis never counted, counted as the calls fail (redis: admitted by failing open; not measured for budget, whose free units sit in Redis' reservation, not its count, by design)")
	}
	if o.sweepSpec.changesTrace() {
		n = append(n, "crowd-span: each point plays a trace of its own, the flash crowd's bursts arriving over the span (the rest of the trace unchanged); every mode is swept, and each row is measured against the reference on its own trace")
	} else if o.cfg.CrowdSpan > 0 {
		n = append(n, fmt.Sprintf("crowd-span: each crowd identity's burst arrives over %s", o.cfg.CrowdSpan))
	}
	n = append(n, o.traceNotes()...)
	if o.net.loss > 0 {
		n = append(n, fmt.Sprintf("redis-loss: at %s the budget modes' Redis loses every key and loaded script (FLUSHALL, SCRIPT FLUSH); pure Redis' calls arriving from then on find each identity's key empty (a fresh key: scripts stay loaded); local is not affected; Redis memory is not measured", o.net.loss))
	}
	if o.clustered() {
		n = append(n, "redis cluster: round trips are counted as on one node: pure Redis one per decision, budget its Machines' own count (one per decision call, one per Sync, whose pipeline go-redis sends to every master it touches at once)")
	}
	if o.clockSkew > 0 || o.sweepSpec.param == "clock-skew" {
		n = append(n, "clock skew: each PoP's clock is offset by a seeded amount spread evenly over [-D, +D]; limiters see their PoP's clock, the ground truth judges on true time",
			"redis-servertime: pure Redis with Redis' clock, modelled as the request's true virtual time (backends/redis WithServerTime reads Redis TIME, the real wall clock, which cannot run in virtual time)")
	}
	return n
}

// latencyNote says how the network model charges latency.
func latencyNote(o *options) string {
	if o.net.network == "ideal" {
		return fmt.Sprintf("latency: each Redis round trip a decision waits for costs its PoP's modelled RTT (%s..%s); Redis state changes at the request's own instant", o.rttMin, o.rttMax)
	}
	return fmt.Sprintf("honest network: every Redis call, reply and gossip message arrives one drawn one-way delay after it is sent (base: half the PoP's RTT of %s..%s, or the PoP-to-PoP delay; plus exponential jitter of mean %g × base); Redis executes calls in arrival order; a reply changes a PoP's view when it arrives; latency is the whole round trip", o.rttMin, o.rttMax, o.net.jitter)
}

// runMode runs one mode with the current options; last says no mode runs
// on srv after it (dropKeys).
func (o *options) runMode(ctx context.Context, tr *traffic.Trace, net netmodel.Model,
	srv *servers, mode string, bar *progress, last bool) (engine.Result, error) {
	if !engine.Available(mode) {
		return engine.Result{}, fmt.Errorf("mode %s is not available in this build", mode)
	}
	e := engine.NewEnv(tr, net)
	e.SyncInterval, e.Worst, e.FreeCredit, e.BudgetPoPs, e.BudgetBuckets = o.syncInterval, o.worst, o.freeCredit, o.budgetPoPs, o.budgetBuckets
	e.RedisAddr, e.NATSURL, e.Namespace = srv.redisAddr, srv.natsURL, namespace(mode)
	e.RedisCluster = o.clustered()
	e.Skew = netmodel.Skews(o.cfg.PoPs, o.clockSkew, o.cfg.Seed)
	o.net.apply(e)
	var end func()
	e.Progress, end = bar.start(mode)
	defer end()
	m, load, mem := startRSS(), startLoad(ctx, srv.redisAddr, o.clustered()), startMemory(ctx, o.singleAddr(srv))
	mem.clock = endClock(e)
	r, err := engine.Run(ctx, e, mode)
	r.PeakRSSMB, r.RedisLoad = m.peakMB(), load.stop(ctx)
	if red := mem.stop(ctx, e.Namespace); err == nil && o.net.loss == 0 {
		r.Memory = withRedis(r.Memory, red) // not after a loss: Redis was emptied (budget) or holds each identity's keys twice (pure Redis)
	}
	if cerr := srv.dropKeys(ctx, o.clustered(), e.Namespace, last); cerr != nil && err == nil {
		err = fmt.Errorf("mode %s: deleting its keys: %w", mode, cerr)
	}
	return r, err
}

// endClock is run e's clock at its end for the budget layout's expiries:
// the trace's end by the slowest PoP's clock, its window, and the budget
// limiter's default expiry slack (what a deployment's keys carry).
func endClock(e *engine.Env) *runClock {
	end := e.Start.Add(e.Trace.Duration)
	for _, s := range e.Skew {
		end = end.Add(min(s, 0))
	}
	return &runClock{end: end.UnixMilli(), window: e.Trace.Config.Window.Milliseconds(), slack: budget.DefaultExpirySlack.Milliseconds(),
		redisSlack: redis.DefaultTimeout.Milliseconds()}
}

// withRedis adds a mode's Redis memory to what the engine measured (the
// views); nil when neither measured anything.
func withRedis(m *engine.Memory, r *engine.RedisMemory) *engine.Memory {
	if r == nil {
		return m
	}
	if m == nil {
		m = engine.NewMemory()
	}
	m.Redis = r
	return m
}

// singleAddr is the Redis whose used_memory measures a mode: the single
// node, or "" on a cluster (used_memory is per node).
func (o *options) singleAddr(srv *servers) string {
	if o.clustered() {
		return ""
	}
	return srv.redisAddr
}
