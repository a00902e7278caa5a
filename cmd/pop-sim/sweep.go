package main

import (
	"fmt"
	"strings"
	"time"
)

// sweepSpec is a parsed -sweep: the parameter and its values, as given and
// parsed.
type sweepSpec struct {
	param  string
	values []string
}

// parseSweep reads "sync-interval=10ms,50ms", "clock-skew=0,500ms,2s" or
// "crowd-span=100ms,1s,10s"; "" is no sweep.
func parseSweep(s string) (sweepSpec, error) {
	if s == "" {
		return sweepSpec{}, nil
	}
	param, list, ok := strings.Cut(s, "=")
	if !ok || list == "" {
		return sweepSpec{}, fmt.Errorf("sweep %q: want param=v1[,v2,...]", s)
	}
	sp := sweepSpec{param: param, values: strings.Split(list, ",")}
	for _, v := range sp.values {
		if err := sp.check(v); err != nil {
			return sweepSpec{}, err
		}
	}
	return sp, nil
}

func (sp sweepSpec) check(v string) error {
	switch sp.param {
	case "sync-interval":
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("sweep sync-interval: bad value %q", v)
		}
	case "clock-skew":
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("sweep clock-skew: bad value %q", v)
		}
	case "crowd-span":
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("sweep crowd-span: bad value %q (want a positive duration)", v)
		}
	default:
		return fmt.Errorf("sweep: unknown parameter %q (want sync-interval, clock-skew or crowd-span)", sp.param)
	}
	return nil
}

// apply sets the swept parameter to v (already checked) on o.
func (sp sweepSpec) apply(o *options, v string) {
	switch sp.param {
	case "sync-interval":
		o.syncInterval, _ = time.ParseDuration(v)
	case "clock-skew":
		o.clockSkew, _ = time.ParseDuration(v)
	case "crowd-span":
		o.cfg.CrowdSpan, _ = time.ParseDuration(v)
	}
}

// changesTrace reports whether the swept parameter changes the trace (its
// points then each play a trace of their own, every mode swept).
func (sp sweepSpec) changesTrace() bool { return sp.param == "crowd-span" }
