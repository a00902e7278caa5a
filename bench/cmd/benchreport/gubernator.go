package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/bench/peers"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sim/natsembed"
	"github.com/edgelimit/edgelimit/sim/traffic"
	"github.com/edgelimit/edgelimit/sync/budget"
	gubernator "github.com/gubernator-io/gubernator/v2"
	"github.com/nats-io/nats.go"
	goredis "github.com/redis/go-redis/v9"
)

// accuracySync is the budget limiter's Sync interval in table 4, and
// gubernator's test cluster uses GlobalSyncWait 50 ms: the same cadence.
const accuracySync = 50 * time.Millisecond

// runTimeout bounds one limiter's replay; stopTimeout bounds its shutdown.
const (
	runTimeout  = 2 * time.Minute
	stopTimeout = 30 * time.Second
)

// within runs f and returns when it is done or after d, whichever is first
// (a shutdown that hangs is left behind rather than stalling the report).
func within(d time.Duration, f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		logf("  shutdown still running after %s; going on", d)
	}
}

// accuracyRow is one limiter of table 4.
type accuracyRow struct {
	name, note string
	res        scored
	err        error
}

// accuracyTrace is the simulator's spread-attack scenario, sized to replay
// in real time in a few seconds per limiter.
func accuracyTrace(quick bool) (*traffic.Trace, error) {
	c := traffic.Config{Scenario: "spread-attack", PoPs: 4, Identities: 2000, Requests: 12000,
		Limit: 100, Window: time.Second, Seed: 1}
	if quick {
		c.Identities, c.Requests = 500, 3000
	}
	return traffic.Generate(c)
}

// gubernatorTable is table 4: gubernator's in-process cluster in GLOBAL
// behaviour against our budget limiter (and pure-Redis mode, and gubernator
// without GLOBAL), on the simulator's spread-attack traffic replayed in
// real time, scored by the simulator's ground truth.
func gubernatorTable(ctx context.Context, e *env) (section, error) {
	tr, err := accuracyTrace(e.cfg.quick)
	if err != nil {
		return nil, err
	}
	c := tr.Config
	key := func(id int32) string { return "id" + strconv.Itoa(int(id)) }
	var rows []accuracyRow
	run := func(name, note string, build func() (peers.Weighted, func(), error)) {
		logf("  accuracy: %s", name)
		w, stop, err := build()
		if err != nil {
			rows = append(rows, accuracyRow{name: name, note: note, err: err})
			return
		}
		rctx, cancel := context.WithTimeout(ctx, runTimeout)
		res := replay(rctx, tr, w, key)
		cancel()
		within(stopTimeout, stop)
		rows = append(rows, accuracyRow{name: name, note: note, res: res})
	}
	run("**edgelimit sync/budget**", fmt.Sprintf("sliding window, Sync every %s, gossip over NATS", accuracySync),
		func() (peers.Weighted, func(), error) { return budgetPoPs(e, c) })
	run("gubernator v2 GLOBAL", "token bucket, GlobalSyncWait 50ms (its test cluster)",
		func() (peers.Weighted, func(), error) {
			return peers.GubernatorCluster(c.PoPs, c.Limit, c.Window, gubernator.Behavior_GLOBAL)
		})
	run("gubernator v2, owner decides (no GLOBAL)", "token bucket; every request forwarded to the key's owner",
		func() (peers.Weighted, func(), error) {
			return peers.GubernatorCluster(c.PoPs, c.Limit, c.Window, gubernator.Behavior_BATCHING)
		})
	run("edgelimit backends/redis (pure-Redis)", "sliding window, one script call per decision",
		func() (peers.Weighted, func(), error) {
			l, err := redis.New(e.client, core.PerWindow(c.Limit, c.Window), redis.WithPrefix("acc"))
			if err != nil {
				return nil, nil, err
			}
			return func(ctx context.Context, _ int, k string, n int64) (bool, error) {
				d, err := l.AllowN(ctx, k, time.Now(), n)
				return d.Allowed, err
			}, func() {}, nil
		})
	return func(d *doc) { renderAccuracy(d, tr, rows) }, nil
}

// budgetPoPs runs one budget limiter per PoP, each with its own Redis
// client, gossiping over an embedded NATS, with Start's Sync loop.
func budgetPoPs(e *env, c traffic.Config) (peers.Weighted, func(), error) {
	ns, err := natsembed.Start()
	if err != nil {
		return nil, nil, err
	}
	var lims []*budget.Limiter
	var closers []func()
	stop := func() {
		for _, l := range lims {
			l.Close(context.Background())
		}
		for _, f := range closers {
			f()
		}
		ns.Stop()
	}
	for p := range c.PoPs {
		nc, err := nats.Connect(ns.URL())
		if err != nil {
			stop()
			return nil, nil, err
		}
		rc := goredis.NewClient(&goredis.Options{Addr: e.redis.Addr, PoolSize: 8})
		closers = append(closers, nc.Close, func() { rc.Close() })
		l, err := budget.New(budget.Config{PoP: fmt.Sprintf("pop%d", p), Limit: core.PerWindow(c.Limit, c.Window),
			PoPs: c.PoPs, Namespace: "acc", SyncInterval: accuracySync}, rc, nil)
		if err == nil {
			err = l.UseNATS(nc)
		}
		if err != nil {
			stop()
			return nil, nil, err
		}
		l.Start()
		lims = append(lims, l)
	}
	return func(ctx context.Context, pop int, k string, n int64) (bool, error) {
		d, err := lims[pop].AllowN(ctx, k, time.Now(), n)
		return d.Allowed, err
	}, stop, nil
}
