package main

import (
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/sim/engine"
)

// validateDeployment checks the flags that depend on the trace's PoPs and
// length, once they are known: a -trace file's replace -pops and the
// scenario's (loadTrace). The faults must name PoPs the trace has and the
// Redis loss fall within it, the free credit's reservation (2 × it ×
// the budget Machines' PoPs) must fit the limit, and the clock skew, given
// or swept, must leave every PoP's clock at or after the Unix epoch
// (engine.MaxSkew, which depends on the window).
func (o *options) validateDeployment() error {
	if err := o.net.faults.Validate(o.cfg.PoPs); err != nil {
		return err
	}
	if err := o.validateSkew(); err != nil {
		return err
	}
	if d := o.traceDuration(); o.net.loss > 0 && o.net.loss >= d {
		return fmt.Errorf("redis loss at %v: past the trace's end (%v)", o.net.loss, d)
	}
	if p := o.budgetP(); o.freeCredit > 0 && p > 0 && o.freeCredit > o.cfg.Limit/int64(2*p) {
		return fmt.Errorf("free-credit %d: 2 × %d × %d PoPs passes the limit of %d", o.freeCredit, o.freeCredit, p, o.cfg.Limit)
	}
	return nil
}

// traceDuration is how long the trace to simulate lasts: the -trace
// file's, or the scenario's.
func (o *options) traceDuration() time.Duration {
	if o.tf.loaded != nil {
		return o.tf.loaded.Duration
	}
	return o.cfg.Duration()
}

// validateSkew refuses a -clock-skew, or a swept one, past engine.MaxSkew
// of the trace's window: the PoP furthest behind would read a time before
// the Unix epoch, which the limiters refuse mid-run.
func (o *options) validateSkew() error {
	skews := []time.Duration{o.clockSkew}
	if o.sweepSpec.param == "clock-skew" {
		for _, v := range o.sweepSpec.values {
			d, _ := time.ParseDuration(v)
			skews = append(skews, d)
		}
	}
	most := engine.MaxSkew(o.cfg.Window)
	for _, d := range skews {
		if d > most {
			return fmt.Errorf("clock-skew %v: must be at most %v: the PoP furthest behind would read a time before the Unix epoch, which the limiters refuse (the simulated trace starts at %s)",
				d, most, engine.StartOf(o.cfg.Window).UTC().Format(time.RFC3339))
		}
	}
	return nil
}
