package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/edgelimit/edgelimit/sim/engine"
	"github.com/edgelimit/edgelimit/sim/report"
)

// childEnv is set in the environment of runApart's processes (tests run
// the command in process, and their binary reads it to act as pop-sim).
const childEnv = "EDGELIMIT_POPSIM_CHILD"

// childStop is how long a cancelled process has, after SIGTERM, to stop
// its redis-server and exit before it is killed.
const childStop = 20 * time.Second

// runApart runs jobs n at a time, each in a pop-sim process of its own
// (this executable, given the command line with the job's mode, -json and
// -parallel 1), which generates the same trace from the same flags and
// starts a private redis-server: every figure is the one a run of that
// mode alone prints, a mode's Redis load and memory come from its own
// server's INFO, and its peak MB is its own process's. The first failure
// stops the others. The run's peak is the sum over every process below
// this one, sampled.
//
// The reference's row is the one every process computed on its trace (the
// first job's; nil when a sweep point changes the trace: crowd-span).
func (o *options) runApart(ctx context.Context, n int, jobs []job, bar *progress) ([]engine.Result, *engine.Result, *report.Run, error) {
	began := time.Now()
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, &report.Run{Parallel: n}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	peak := sampleTreeRSS(os.Getpid())
	res, reps := make([]engine.Result, len(jobs)), make([]report.Report, len(jobs))
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if reps[i], errs[i] = o.runChild(ctx, exe, jobs[i], n, bar); errs[i] != nil {
					cancel()
					continue
				}
				res[i] = reps[i].Results[0]
			}
		}()
	}
feed:
	for _, i := range dispatchOrder(jobs) {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	run := &report.Run{Parallel: n, WallSeconds: time.Since(began).Seconds(), PeakRSSMB: peak()}
	for _, r := range reps {
		run.Requests = max(run.Requests, r.Requests)
	}
	if o.tf.loaded == nil {
		o.tf.made = run.Requests // what the scenario made (rateNote)
	}
	var ref *engine.Result
	if !o.sweepSpec.changesTrace() {
		for _, r := range reps {
			if ref = r.Reference; ref != nil {
				break
			}
		}
	}
	return res, ref, run, firstError(errs)
}

// childArgs is the command line of job's process: the user's, then what
// overrides it (the flag package keeps a flag's last value): the job's
// mode and swept value, no sweep, plot or CSV, JSON on stdout, progress
// as lines, one mode at a time, and -cpuprofile, when given, to a file of
// its own.
func (o *options) childArgs(j job) []string {
	args := append(append([]string(nil), o.args...), "-mode="+j.mode, "-sweep=", "-plot=", "-csv=",
		"-json", "-progress-lines", "-parallel=1", "-cpuprofile=")
	if o.cpuProfile != "" {
		name := j.mode
		if j.param != "" {
			name += "-" + j.param + "=" + j.value
		}
		args[len(args)-1] += o.cpuProfile + "." + strings.ReplaceAll(name, "/", "_")
	}
	if j.param != "" {
		args = append(args, "-"+j.param+"="+j.value)
	}
	return args
}

// childEnviron is the environment of runApart's processes: this one's,
// childEnv set, and GOMAXPROCS, unless set already, to the cores each of
// the workers processes running at once may take (at least 1). Each
// process beside a busy neighbour and two redis-servers then runs no Go
// threads the cores cannot hold: with the default of one per core, a
// process's idle P runs the collector's idle mark workers and spinning
// threads on the core the neighbour needs (at 1,000,000 identities and
// 10,000,000 requests on two cores: 694 s with 1; with 2, still running
// at 14 min; docs/tradeoffs.md §4, "At scale").
func childEnviron(env []string, cores, workers int) []string {
	env = append(slices.Clone(env), childEnv+"=1")
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GOMAXPROCS=") }) {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(max(1, cores/max(workers, 1))))
	}
	return env
}

// runChild runs job's process, one of n at a time, and reads its report. Its stderr carries
// progress lines, drawn on bar, and, when it fails, its one-line error.
func (o *options) runChild(ctx context.Context, exe string, j job, n int, bar *progress) (report.Report, error) {
	var rep report.Report
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	cmd := exec.CommandContext(ctx, exe, o.childArgs(j)...)
	cmd.Env = childEnviron(os.Environ(), runtime.NumCPU(), n)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	stopWithParent(cmd)
	cmd.WaitDelay = childStop
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return rep, err
	}
	if err := cmd.Start(); err != nil {
		return rep, err
	}
	report, end := bar.start(j.label())
	last := followChild(stderr, bar, report)
	end()
	err = cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return rep, ctx.Err()
	case err != nil:
		return rep, fmt.Errorf("%s: %s", j.label(), strings.TrimPrefix(last, "pop-sim: "))
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		return rep, fmt.Errorf("%s: reading its report: %w", j.label(), err)
	}
	if len(rep.Results) != 1 {
		return rep, fmt.Errorf("%s: its report has %d results, want 1", j.label(), len(rep.Results))
	}
	return rep, nil
}

// label names job in progress and errors: its mode, and its swept value.
func (j job) label() string {
	if j.param == "" {
		return j.mode
	}
	return j.mode + " " + j.param + "=" + j.value
}

// followChild reads a process's stderr to its end: "progress DONE TOTAL"
// lines go to report (nil: no terminal), the last other line is returned
// (its error, when it fails).
func followChild(r io.Reader, bar *progress, report func(int)) string {
	var last string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var done, total int
		if _, err := fmt.Sscanf(sc.Text(), "progress %d %d", &done, &total); err == nil {
			if report != nil {
				bar.setTotal(total)
				report(done)
			}
			continue
		}
		if line := strings.TrimSpace(sc.Text()); line != "" {
			last = line
		}
	}
	return last
}
