package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/sim/engine"
	"github.com/edgelimit/edgelimit/sim/netmodel"
)

// netOptions are the flags of the network model and its faults.
type netOptions struct {
	network    string // honest | ideal
	jitter     float64
	outage     string        // -redis-outage START+DURATION
	partition  string        // -partition POP@START+DURATION
	crash      string        // -crash POP@TIME
	loss       time.Duration // -redis-loss TIME
	gossipLoss float64
	gossipDup  float64
	faults     netmodel.Faults // parsed by validateNet
}

// netFlags adds the network model's flags to fs.
func (n *netOptions) netFlags(fs *flag.FlagSet) {
	fs.StringVar(&n.network, "network", "honest", "honest: every Redis call, reply and gossip message takes its drawn one-way delay; ideal: Redis calls take effect at the request's instant (the old model)")
	fs.Float64Var(&n.jitter, "jitter", 0.2, "honest network: mean jitter of each one-way delay, a fraction of its base (exponential, so messages reorder)")
	fs.StringVar(&n.outage, "redis-outage", "", "START+DURATION: Redis refuses every call arriving then, e.g. 20s+5s")
	fs.StringVar(&n.partition, "partition", "", "POP@START+DURATION: PoP number POP cut from Redis and its peers, e.g. 3@20s+5s")
	fs.StringVar(&n.crash, "crash", "", "POP@TIME: PoP number POP's process dies at TIME, losing what it had not flushed and leaving the requests it was waiting on Redis for unanswered (denied; pure Redis too), and restarts as a new incarnation")
	fs.DurationVar(&n.loss, "redis-loss", 0, "TIME: Redis loses every key and loaded script at TIME, before the trace's end, as a restart without persistence would, e.g. 30s (0: never; pure Redis: each identity's key starts empty; local: no effect; Redis memory is then not measured)")
	fs.Float64Var(&n.gossipLoss, "gossip-loss", 0, "chance that one copy of a gossip message is lost")
	fs.Float64Var(&n.gossipDup, "gossip-dup", 0, "chance that one copy of a gossip message is delivered twice")
}

// validateNet parses and checks the network flags; what the faults ask of
// the trace (their PoPs, their instants) is checked once it is known
// (validateDeployment).
func (n *netOptions) validateNet() error {
	if n.network != "honest" && n.network != "ideal" {
		return fmt.Errorf("unknown network %q (want honest|ideal)", n.network)
	}
	if !(n.jitter >= 0 && n.jitter <= 10) {
		return errors.New("jitter must be in [0, 10]")
	}
	f := netmodel.Faults{GossipLoss: n.gossipLoss, GossipDup: n.gossipDup, RedisLoss: n.loss}
	var err error
	if f.RedisOutage, err = netmodel.ParseSpan(n.outage); err != nil {
		return fmt.Errorf("-redis-outage %w", err)
	}
	if f.Partition, err = netmodel.ParsePoPSpan(n.partition); err != nil {
		return fmt.Errorf("-partition %w", err)
	}
	c, ok, err := netmodel.ParseCrash(n.crash)
	if err != nil {
		return fmt.Errorf("-crash %w", err)
	}
	if ok {
		f.Crashes = []netmodel.Crash{c}
	}
	if n.network == "ideal" && f.Any() {
		return errors.New("faults need the honest network: drop -network ideal")
	}
	n.faults = f
	return nil
}

// apply sets e's network model.
func (n *netOptions) apply(e *engine.Env) {
	e.Network, e.Jitter, e.Faults = n.network, n.jitter, n.faults
}

// usageError carries -h's text: run prints it on stdout and exits 0.
type usageError struct{ text string }

func (u *usageError) Error() string { return "usage requested" }

// usage is the help of fs: a line on what pop-sim does, then every flag
// with its default.
func usage(fs *flag.FlagSet) error {
	var b bytes.Buffer
	b.WriteString("usage: pop-sim [flags]\n\nPlays one traffic scenario through pure Redis, each PoP alone and the\nlocal-first budget limiter (without and with gossip), on a real Redis and\nNATS in virtual time, and reports accuracy against round trips saved. Flags:\n\n")
	fs.SetOutput(&b)
	fs.PrintDefaults()
	return &usageError{text: b.String()}
}
