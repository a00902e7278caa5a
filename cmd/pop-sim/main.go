// Command pop-sim is edgelimit's multi-PoP simulator. It plays one
// deterministic traffic scenario through several limiter modes — pure Redis,
// each PoP alone, and (on the honest network) the local-first budget
// limiter without and with gossip over NATS (budget-gossip) — on a real
// Redis and a real NATS, in virtual time, and reports the global
// accuracy each mode loses against the exact admitted log and the Redis
// round trips it saves, and, against the reference (the exact log deciding
// each request at its instant with no network, a row of its own), the
// quota each mode serves, its under- and over-admission, the identities it
// limits wrongly and its rate error per identity. By default the network is honest: every Redis
// call, reply and gossip message arrives a drawn one-way delay after it is
// sent (sim/engine); -network ideal applies Redis calls at the request's
// instant (the older model).
//
//	go run ./cmd/pop-sim                      # all modes, mixed traffic
//	go run ./cmd/pop-sim -scenario article    # the article's tables A and B
//	go run ./cmd/pop-sim -mode budget -sweep sync-interval=10ms,100ms,1s -plot t.png -csv t.csv
//	go run ./cmd/pop-sim -mode redis,local,budget,budget-nowait -sweep sync-interval=50ms,200ms -plot f.png  # a curve per budget mode, redis and local as references
//
//	go run ./cmd/pop-sim -clock-skew 500ms     # PoP clocks spread over ±500ms; adds redis-servertime
//	go run ./cmd/pop-sim -redis-cluster       # on a private 3-master Redis Cluster
//
//	go run ./cmd/pop-sim -scenario edge       # an edge's traffic: a calm Zipf population, a warm head, a few abusers
//	go run ./cmd/pop-sim -scenario flash-crowd -mode redis,local,budget -sweep crowd-span=100ms,1s,10s -plot c.png
//
//	go run ./cmd/pop-sim -trace mine.csv      # your own traffic (docs/trace-format.md)
//	go run ./cmd/pop-sim -write-trace t.csv   # save the scenario's trace (and its seed), then exit
//	go run ./cmd/pop-sim -rate 400            # the trace lasts requests / (400 × pops) seconds
//	go run ./cmd/pop-sim -identities 1000000 -requests 10000000 -cpuprofile cpu.out  # at scale (~12 min here)
//
//	go run ./cmd/pop-sim -redis-outage 20s+5s -partition 3@30s+2s -crash 5@40s -gossip-loss 0.05
//	go run ./cmd/pop-sim -mode redis,budget,budget-nowait  # latency first (experimental; not in "all")
//	go run ./cmd/pop-sim -mode redis,budget -redis-outage 20s+5s -worst 3  # each mode's 3 most over-admitted identities, second by second
//
// It starts a private redis-server (with -redis-cluster, a private
// 3-master Redis Cluster) and, for budget-gossip, an embedded NATS server unless -redis-addr
// (one address, or a comma-separated list of Redis Cluster nodes) and
// -nats-url name running ones. By default (-parallel 2) it runs two modes
// at a time, each in a pop-sim process of its own with its own
// redis-server and the same trace, so Redis' thread and the simulator keep
// both cores busy; the figures are those of the modes run one after the
// other (-parallel 1, and always so with -redis-addr or -redis-cluster). Each mode's row gives its peak memory
// (Linux) and what it cost Redis (script calls, script time, CPU, from
// INFO; on a Redis Cluster summed over its masters). Bad flags end with a one-line
// error and exit status 2 before any work (a -csv or -plot path the run's
// end could not write among them: those files are written only once the
// run has finished, so a failed run leaves them untouched); a failure
// during the run exits 1.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	goredis "github.com/redis/go-redis/v9"
)

// gcPercent is pop-sim's GOGC unless the environment sets one. At a
// million identities eight PoPs' views are over a gigabyte of small Go
// objects, which the default of 100 has the collector rescan for a fifth of
// the run's CPU; 400 trades memory for time (the removed hybrid at 1M
// identities and 2M requests: 127 s and 2.6 GB peak at 100, 94 s and 4.4 GB
// at 400). The
// table's peak MB column shows what a run took.
const gcPercent = 400

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	goredis.SetLogger(quiet{})
	// An interrupt or SIGTERM (runApart stops its processes so) cancels
	// the run, which then stops the servers it started before exiting.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command, testable in process: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args)
	if err == nil {
		err = o.checkServers(ctx)
	}
	var help *usageError
	if errors.As(err, &help) {
		fmt.Fprint(stdout, help.text)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "pop-sim: %v\n", oneLine(err))
		return 2
	}
	if err := o.execute(ctx, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "pop-sim: %v\n", oneLine(err))
		return 1
	}
	return 0
}

// quiet drops go-redis' internal log lines, so stderr carries only our one
// line per error.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
