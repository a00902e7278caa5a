package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/edgelimit/edgelimit/sim/traffic"
)

// ErrCrowd is wrapped by every error a crowd configuration is refused
// with; test with errors.Is.
var ErrCrowd = errors.New("bad crowd configuration")

// crowdConfig sizes the crowd trace. The zero value is not valid:
// crowdCmd's flags set every field.
type crowdConfig struct {
	PoPs     int           // every crowd identity sends from each of them
	Limit    int           // the limit the crowd is a multiple of
	Window   time.Duration // the limit's window
	Times    int           // each crowd identity sends Times × Limit units
	Crowd    int           // crowd identities: id0 .. id<Crowd-1>
	Calm     int           // calm identities after them
	CalmReqs int           // calm requests, spread at random over the trace
	Span     time.Duration // how long each crowd identity's burst takes to arrive
	Duration time.Duration // the trace's length
	Seed     uint64        // the calm traffic's draws
}

// check refuses a configuration no trace can hold, wrapping ErrCrowd.
func (c crowdConfig) check() error {
	switch {
	case c.PoPs < 1 || c.PoPs > 1<<15-1:
		return fmt.Errorf("%w: -pops %d, want 1..32767", ErrCrowd, c.PoPs)
	case c.Limit < 1 || c.Times < 1 || c.Crowd < 1 || c.Calm < 0 || c.CalmReqs < 0 || (c.Calm == 0) != (c.CalmReqs == 0):
		return fmt.Errorf("%w: -limit %d, -times %d, -crowd %d at least 1; -calm %d and -calm-requests %d both 0 or both positive",
			ErrCrowd, c.Limit, c.Times, c.Crowd, c.Calm, c.CalmReqs)
	case c.Span <= 0 || c.Window <= 0:
		return fmt.Errorf("%w: -span %s and -window %s must be positive", ErrCrowd, c.Span, c.Window)
	case c.Duration < 2*c.Window || c.Duration/2+c.Window/10+c.Span > c.Duration:
		return fmt.Errorf("%w: -duration %s must hold two windows of %s and the burst (from half the trace, over -span %s and a tenth of a window)",
			ErrCrowd, c.Duration, c.Window, c.Span)
	}
	return nil
}

// crowdTrace is the trace: crowd identity i sends Times × Limit requests
// of one unit, evenly spaced over Span from its start, PoP by PoP in turn
// (so every PoP sends a 1/PoPs share), starting at half the trace plus
// i/Crowd of a tenth of a window (the identities' bursts overlap, none
// together); the calm identities send CalmReqs requests between them, at
// times, PoPs and identities drawn uniformly with Seed. Class names:
// "crowd10x" (or crowd<Times>x) and "calm". Times are truncated to the
// microsecond.
func crowdTrace(c crowdConfig) (*traffic.Trace, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	n := c.Times * c.Limit
	rs := make([]traffic.Request, 0, c.Crowd*n+c.CalmReqs)
	for i := range c.Crowd {
		start := c.Duration/2 + time.Duration(i)*(c.Window/10)/time.Duration(c.Crowd)
		for k := range n {
			at := start + time.Duration(k)*c.Span/time.Duration(n)
			rs = append(rs, traffic.Request{At: at.Truncate(time.Microsecond), ID: int32(i), PoP: int16(k % c.PoPs), N: 1})
		}
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x62756467657431))
	for range c.CalmReqs {
		at := time.Duration(rng.Int64N(int64(c.Duration))).Truncate(time.Microsecond)
		rs = append(rs, traffic.Request{At: at, ID: int32(c.Crowd + rng.IntN(c.Calm)), PoP: int16(rng.IntN(c.PoPs)), N: 1})
	}
	slices.SortStableFunc(rs, func(a, b traffic.Request) int { return cmp.Compare(a.At, b.At) })
	ids := c.Crowd + c.Calm
	classOf := make([]uint8, ids)
	for i := c.Crowd; i < ids; i++ {
		classOf[i] = 1
	}
	return &traffic.Trace{Config: traffic.Config{PoPs: c.PoPs, Identities: ids, Seed: c.Seed},
		Duration: c.Duration, Requests: rs, Seeded: true,
		Classes: []string{fmt.Sprintf("crowd%dx", c.Times), "calm"}, ClassOf: classOf}, nil
}

// crowdCmd parses the crowd subcommand's flags and writes the trace as CSV.
func crowdCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("crowd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c crowdConfig
	fs.IntVar(&c.PoPs, "pops", 8, "PoPs; every crowd identity sends from each")
	fs.IntVar(&c.Limit, "limit", 100, "the limit (units per window) the crowd is a multiple of")
	fs.DurationVar(&c.Window, "window", 10*time.Second, "the limit's window")
	fs.IntVar(&c.Times, "times", 10, "each crowd identity sends this many times the limit")
	fs.IntVar(&c.Crowd, "crowd", 120, "crowd identities")
	fs.IntVar(&c.Calm, "calm", 8000, "calm identities")
	fs.IntVar(&c.CalmReqs, "calm-requests", 80000, "calm requests over the whole trace")
	fs.DurationVar(&c.Span, "span", 0, "how long each crowd identity's burst takes to arrive (required)")
	fs.DurationVar(&c.Duration, "duration", time.Minute, "the trace's length")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the calm traffic")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", ErrCrowd, fs.Args())
	}
	tr, err := crowdTrace(c)
	if err != nil {
		return err
	}
	return traffic.WriteTrace(stdout, tr, traffic.CSV,
		fmt.Sprintf("budget-lines crowd: %d identities each send %d× the limit of %d in all, an equal share from each of %d PoPs, within %s", c.Crowd, c.Times, c.Limit, c.PoPs, c.Span))
}
