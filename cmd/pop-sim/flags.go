package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/edgelimit/edgelimit/sim/traffic"
)

// options are the parsed flags.
type options struct {
	cfg           traffic.Config
	mode          string
	modeList      []string // -mode's modes; nil for "all" (modes.go)
	syncInterval  time.Duration
	freeCredit    int64
	budgetPoPs    int
	budgetBuckets int
	worst         int // -worst: engine.Env.Worst
	rttMin        time.Duration
	rttMax        time.Duration
	redisAddr     string // one host:port, or a comma-separated list of Redis Cluster nodes
	redisCluster  bool   // -redis-cluster: start a private 3-master cluster
	clusterAddr   bool   // the single -redis-addr is a cluster node (found by checkServers)
	clockSkew     time.Duration
	natsURL       string
	json          bool
	sweep         string
	plot          string
	csv           string
	sweepSpec     sweepSpec

	net netOptions // the network model and its faults (netflags.go)

	articleRequests   int64 // table B: requests of the one identity
	articleIdentities int   // table B: identities for used_memory

	tf traceFiles // -trace, -write-trace (trace.go)

	cpuProfile string // -cpuprofile (profile.go)

	parallel      int      // -parallel: modes run at a time (parallel.go)
	progressLines bool     // -progress-lines: progress as lines, for a parent pop-sim
	args          []string // the command line, which runApart's processes are given
}

func parseFlags(args []string) (*options, error) {
	o := &options{cfg: traffic.DefaultConfig(), args: args}
	fs := flag.NewFlagSet("pop-sim", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c := &o.cfg
	fs.StringVar(&c.Scenario, "scenario", c.Scenario, "traffic: "+strings.Join(scenarios(), "|"))
	fs.StringVar(&o.mode, "mode", "all", "all, or one or a comma list of "+strings.Join(knownModes(), "|")+"; with -sweep, the budget modes listed are swept and redis, local run once as reference points")
	fs.IntVar(&c.PoPs, "pops", c.PoPs, "simulated points of presence")
	fs.IntVar(&c.Identities, "identities", c.Identities, "distinct identities")
	fs.IntVar(&c.Requests, "requests", c.Requests, "requests in the trace")
	fs.Int64Var(&c.Limit, "limit", c.Limit, "units admitted per window")
	fs.DurationVar(&c.Window, "window", c.Window, "the limit's window")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "traffic seed: same seed, same figures")
	fs.DurationVar(&c.CrowdSpan, "crowd-span", 0, "flash-crowd: how long each crowd identity's burst takes to arrive, from every PoP (default: a fifth of -window)")
	fs.Float64Var(&c.Rate, "rate", 0, "requests per second per PoP: the trace lasts requests/(rate×pops) (default: 6 windows)")
	fs.DurationVar(&o.syncInterval, "sync-interval", 100*time.Millisecond, "budget: time between a PoP's Syncs with Redis (budget.Config.SyncInterval)")
	fs.IntVar(&o.budgetBuckets, "budget-buckets", 0, "budget: the identity buckets of every budget Machine (budget.Config.Buckets: one Redis hash per bucket and two windows); 0: about 100 identities of the trace each, 16 to 1,024")
	fs.IntVar(&o.budgetPoPs, "budget-pops", 0, "budget: the PoPs every budget Machine is configured with (budget.Config.PoPs); 0: -pops. Fewer than -pops models a deployment whose configuration undercounts its PoPs")
	fs.Int64Var(&o.freeCredit, "free-credit", 0, "budget: units a PoP admits of an identity per window unasked (budget.Config.FreeCredit): 0 lets the library choose (budget.AutoFreeCredit), -1 means none")
	fs.IntVar(&o.worst, "worst", 0, "list each mode's N most over-admitted identities second by second beside the reference's verdicts (in -json too: \"worst\")")
	fs.DurationVar(&o.rttMin, "rtt-min", 5*time.Millisecond, "modelled round trip to Redis of the nearest PoP")
	fs.DurationVar(&o.rttMax, "rtt-max", 150*time.Millisecond, "modelled round trip to Redis of the farthest PoP")
	fs.StringVar(&o.redisAddr, "redis-addr", "", "host:port of a Redis to use, or host:port,host:port,... of Redis Cluster nodes (default: start a private redis-server)")
	fs.BoolVar(&o.redisCluster, "redis-cluster", false, "start a private 3-master Redis Cluster instead of one redis-server")
	fs.DurationVar(&o.clockSkew, "clock-skew", 0, "offset each PoP's clock by a seeded amount spread over [-D, +D], at most about 56 years (the trace starts on 2026-01-01; a clock before 1970 is refused); the ground truth keeps true time")
	fs.StringVar(&o.natsURL, "nats-url", "", "NATS server for gossip (default: an embedded one)")
	fs.BoolVar(&o.json, "json", false, "print one JSON object instead of the table")
	fs.StringVar(&o.sweep, "sweep", "", "run the budget modes -mode selects (with all: budget) at each value: sync-interval=10ms,50ms,... or clock-skew=0,500ms,...; or crowd-span=100ms,1s,10s (flash-crowd: every mode -mode selects at each value, the plot worst over-admission against the span)")
	fs.StringVar(&o.plot, "plot", "", "with -sweep: write the trade-off curve as a PNG (or .svg, .pdf) when the run ends; its directory is checked at startup")
	fs.StringVar(&o.csv, "csv", "", "with -sweep: write the trade-off curve as CSV when the run ends; its directory is checked at startup")
	o.traceFlags(fs)
	o.net.netFlags(fs)
	o.profileFlags(fs)
	o.parallelFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, usage(fs)
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	o.articleSizes(fs)
	if err := o.validate(); err != nil {
		return o, err
	}
	if err := o.loadTrace(fs); err != nil {
		return o, err
	}
	return o, o.validateDeployment()
}

// articleSizes sizes table B: the article's figures unless -requests or
// -identities were given.
func (o *options) articleSizes(fs *flag.FlagSet) {
	o.articleRequests, o.articleIdentities = articleRequests, articleIdentities
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "requests":
			o.articleRequests = int64(o.cfg.Requests)
		case "identities":
			o.articleIdentities = o.cfg.Identities
		}
	})
}

func scenarios() []string { return append(slices.Clone(traffic.Scenarios), "article") }

// validate checks every flag; the first problem found is the error.
func (o *options) validate() error {
	if err := o.validateSizes(); err != nil {
		return err
	}
	if err := o.validateKnobs(); err != nil {
		return err
	}
	if err := o.net.validateNet(); err != nil {
		return err
	}
	var err error
	if o.modeList, err = parseModes(o.mode); err != nil {
		return err
	}
	if o.sweepSpec, err = parseSweep(o.sweep); err != nil {
		return err
	}
	if err := o.validateBudgetNetwork(); err != nil {
		return err
	}
	if err := o.validateCrowdSpan(); err != nil {
		return err
	}
	if err := o.validateSweepModes(); err != nil {
		return err
	}
	return o.checkOutputs()
}

// validateBudgetNetwork refuses a budget mode, listed or swept, on the
// ideal network: the budget limiter's Machines run on the honest one only.
func (o *options) validateBudgetNetwork() error {
	if o.net.network != "ideal" {
		return nil
	}
	once, swept := o.plan()
	for _, m := range append(once, swept...) {
		if slices.Contains(sweptModes, m) {
			return fmt.Errorf("mode %s runs on the honest network only: drop -network ideal", m)
		}
	}
	return nil
}

// validateCrowdSpan checks that -crowd-span, or a crowd-span sweep, has a
// flash crowd to shape, and that each swept span fits the trace.
func (o *options) validateCrowdSpan() error {
	swept := o.sweepSpec.param == "crowd-span"
	if (o.cfg.CrowdSpan != 0 || swept) && o.cfg.Scenario != "flash-crowd" {
		return fmt.Errorf("-crowd-span and -sweep crowd-span shape the flash-crowd scenario's bursts, not %s", o.cfg.Scenario)
	}
	if !swept {
		return nil
	}
	for _, v := range o.sweepSpec.values {
		c := o.cfg
		c.CrowdSpan, _ = time.ParseDuration(v)
		if err := c.Validate(); err != nil {
			return fmt.Errorf("sweep crowd-span=%s: %w", v, err)
		}
	}
	return nil
}

// validateSizes checks the scenario and the sizes (for the article too,
// which uses -requests and -identities for table B).
func (o *options) validateSizes() error {
	c := o.cfg
	if c.Scenario == "article" {
		c.Scenario = traffic.Scenarios[0]
	}
	return c.Validate()
}

// validateKnobs checks the mode and the other flags.
func (o *options) validateKnobs() error {
	switch {
	case o.clockSkew < 0:
		return errors.New("clock-skew must not be negative")
	case o.redisCluster && o.redisAddr != "":
		return errors.New("-redis-cluster starts its own cluster: drop -redis-addr, or drop -redis-cluster")
	case o.net.loss > 0 && (o.redisAddr != "" || o.redisCluster):
		return errors.New("-redis-loss empties the whole Redis (FLUSHALL): only on pop-sim's own single redis-server (drop -redis-addr and -redis-cluster)")
	case o.cfg.Scenario == "article" && (o.redisCluster || strings.Contains(o.redisAddr, ",")):
		return errors.New("the article scenario needs a single Redis node (used_memory is per node)")
	case o.syncInterval <= 0:
		return errors.New("sync-interval must be positive")
	case o.rttMin < 0 || o.rttMax < o.rttMin:
		return errors.New("need 0 <= rtt-min <= rtt-max")
	case (o.plot != "" || o.csv != "") && o.sweep == "":
		return errors.New("-plot and -csv need -sweep")
	case o.parallel < 1:
		return errors.New("parallel must be at least 1")
	case o.worst < 0:
		return errors.New("worst must not be negative")
	case o.budgetPoPs < 0:
		return errors.New("budget-pops must not be negative")
	case o.budgetBuckets < 0 || o.budgetBuckets > math.MaxInt32:
		return fmt.Errorf("budget-buckets must be 0 to %d", math.MaxInt32)
	}
	return nil
}

// budgetP is the PoPs the budget Machines are configured with.
func (o *options) budgetP() int { return cmp.Or(o.budgetPoPs, o.cfg.PoPs) }

// clustered reports whether the run's Redis is a Redis Cluster.
func (o *options) clustered() bool {
	return o.redisCluster || o.clusterAddr || strings.Contains(o.redisAddr, ",")
}

// oneLine keeps the first line of an error's text.
func oneLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
