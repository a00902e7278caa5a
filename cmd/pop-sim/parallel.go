package main

import (
	"context"
	"errors"
	"flag"
	"slices"
	"strings"

	"github.com/edgelimit/edgelimit/sim/report"
)

// defaultParallel is -parallel's default: two modes at a time, one per
// core of the 2-core machines the project measures on. A mode alone
// leaves a core idle much of the time (its simulator waits for Redis'
// single thread, Redis waits for the simulator); two at a time, each in
// a process of its own, keep both busy. More than two only adds
// contention there.
const defaultParallel = 2

// parallelFlags registers -parallel and -progress-lines.
func (o *options) parallelFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.parallel, "parallel", defaultParallel,
		"run up to N modes (and sweep points) at a time, each in a pop-sim process of its own with a private redis-server; 1 runs them one after the other in this process (always so with -redis-addr or -redis-cluster, whose one Redis they would share)")
	fs.BoolVar(&o.progressLines, "progress-lines", false,
		"write progress as \"progress DONE TOTAL\" lines on stderr instead of a bar (what -parallel's processes tell their parent)")
}

// workers is how many of jobs run at a time: -parallel, at most one per
// job, and one when the modes must share one Redis (-redis-addr,
// -redis-cluster), whose INFO could not tell them apart.
func (o *options) workers(jobs int) int {
	if o.redisAddr != "" || o.redisCluster {
		return 1
	}
	return max(1, min(o.parallel, jobs))
}

// job is one mode run of a simulation: a mode at its options' values (the
// flags', or a sweep point's: then param=value, as a flag).
type job struct {
	o            *options
	mode         string
	param, value string
}

// planJobs lists the simulation's mode runs in report order: the modes
// run once (plan, modes.go), then each swept mode at each swept value
// that is not skipped (the skips are named in the notes, sweepNotes). For
// a sweep's job, points holds its point (Result unset); nil for the
// others.
func (o *options) planJobs() (jobs []job, points []*report.Point) {
	once, swept := o.plan()
	for _, m := range once {
		jobs, points = append(jobs, job{o: o, mode: m}), append(points, nil)
	}
	sp := o.sweepSpec
	for _, m := range swept {
		for _, v := range sp.values {
			oo := *o
			sp.apply(&oo, v)
			jobs = append(jobs, job{o: &oo, mode: m, param: sp.param, value: v})
			points = append(points, &report.Point{Mode: m, Param: sp.param, Value: v})
		}
	}
	return jobs, points
}

// dispatchOrder is the order runApart starts jobs: the budget modes, the
// longest, first, then the others, each group in the jobs' order, so the
// short ones fill the end.
func dispatchOrder(jobs []job) []int {
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ha, hb := strings.HasPrefix(jobs[a].mode, "budget"), strings.HasPrefix(jobs[b].mode, "budget")
		switch {
		case ha == hb:
			return 0
		case ha:
			return -1
		}
		return 1
	})
	return order
}

// firstError is the first error in errs that is not a cancellation (one
// job's failure cancels the others), else the first error, else nil.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
