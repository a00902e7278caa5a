package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/edgelimit/edgelimit/sim/engine"
)

// sweptModes are the modes a sweep runs once per value: the budget
// limiter's, which the swept parameters configure.
var sweptModes = []string{"budget", "budget-nowait", "budget-gossip", "budget-nowait-gossip"}

// referenceModes may share a sweep's -mode list: each runs once, at the
// flags' values, as a reference point (0% and 100% of round trips saved).
var referenceModes = []string{"redis", "local"}

// parseModes reads -mode: "all" (nil), or one known mode or a comma list
// of distinct ones, kept in the order given.
func parseModes(s string) ([]string, error) {
	if s == "all" {
		return nil, nil
	}
	list := strings.Split(s, ",")
	for k, m := range list {
		switch {
		case !slices.Contains(knownModes(), m):
			return nil, fmt.Errorf("unknown mode %q in -mode %q (want all, or a comma list of %s)",
				m, s, strings.Join(knownModes(), "|"))
		case slices.Contains(list[:k], m):
			return nil, fmt.Errorf("mode %q listed twice in -mode %q", m, s)
		}
	}
	return list, nil
}

// validateSweepModes checks, with -sweep and a -mode list, that the list
// names a budget mode to sweep and nothing but references besides.
func (o *options) validateSweepModes() error {
	if o.sweep == "" || o.modeList == nil || o.sweepSpec.changesTrace() {
		return nil
	}
	once, swept := o.plan()
	for _, m := range once {
		if !slices.Contains(referenceModes, m) {
			return fmt.Errorf("-sweep cannot run mode %q: list budget modes to sweep (%s) and optionally references (%s)",
				m, strings.Join(sweptModes, "|"), strings.Join(referenceModes, "|"))
		}
	}
	if len(swept) == 0 {
		return fmt.Errorf("-sweep needs a budget mode in -mode %q (one or more of %s)", o.mode, strings.Join(sweptModes, "|"))
	}
	return nil
}

// plan splits the run into the modes run once, in report order, and the
// modes run at each swept value. Without -sweep every mode runs once; with
// -sweep and -mode all, every mode runs once and budget is swept; with a
// list, its budget modes are swept and the
// others run once. A sweep that changes the trace (crowd-span) sweeps every
// mode.
func (o *options) plan() (once, swept []string) {
	switch {
	case o.sweep == "":
		return o.modes(), nil
	case o.sweepSpec.changesTrace():
		return nil, o.modes()
	case o.modeList == nil:
		return o.modes(), []string{"budget"}
	}
	for _, m := range o.modeList {
		if slices.Contains(sweptModes, m) {
			swept = append(swept, m)
		} else {
			once = append(once, m)
		}
	}
	return once, swept
}

// modes lists the modes -mode names, in report order: "all" adds the
// variants (redis-servertime) only when the clocks are skewed, since
// without skew they equal a mode already in the table, and the budget
// limiter on the honest network outside sweeps (it runs on no other
// network, and a sweep's parameters do not configure it).
func (o *options) modes() []string {
	if o.modeList != nil {
		return o.modeList
	}
	all := slices.Clone(engine.Modes)
	if o.clockSkew > 0 {
		all = append(all, engine.Variants...)
	}
	if o.net.network == "honest" && o.sweep == "" {
		all = append(all, engine.HonestModes...)
	}
	return all
}

// knownModes is every mode -mode accepts besides "all".
func knownModes() []string {
	return slices.Concat(engine.Modes, engine.Variants, engine.HonestModes, engine.Experimental)
}
