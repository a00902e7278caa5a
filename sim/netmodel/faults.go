package netmodel

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Span is a stretch of a trace's time, [Start, Start+Dur). The zero value
// is empty: it holds no instant.
type Span struct{ Start, Dur time.Duration }

// Has reports whether t lies in s.
func (s Span) Has(t time.Duration) bool { return s.Dur > 0 && t >= s.Start && t < s.Start+s.Dur }

// End is the first instant after s.
func (s Span) End() time.Duration { return s.Start + s.Dur }

// String is START+DURATION, as ParseSpan reads it ("" when empty).
func (s Span) String() string {
	if s.Dur <= 0 {
		return ""
	}
	return s.Start.String() + "+" + s.Dur.String()
}

// ParseSpan reads START+DURATION (Go durations from the trace's start,
// e.g. "20s+5s"); "" is the empty Span. A negative start or a non-positive
// duration is an error.
func ParseSpan(v string) (Span, error) {
	if v == "" {
		return Span{}, nil
	}
	a, b, ok := strings.Cut(v, "+")
	if !ok {
		return Span{}, fmt.Errorf("%q: want START+DURATION, e.g. 20s+5s", v)
	}
	start, err := time.ParseDuration(a)
	if err != nil || start < 0 {
		return Span{}, fmt.Errorf("%q: start %q is not a duration ≥ 0", v, a)
	}
	dur, err := time.ParseDuration(b)
	if err != nil || dur <= 0 {
		return Span{}, fmt.Errorf("%q: duration %q is not a positive duration", v, b)
	}
	return Span{Start: start, Dur: dur}, nil
}

// PoPSpan is a Span that concerns one PoP.
type PoPSpan struct {
	PoP int
	Span
}

// ParsePoPSpan reads POP@START+DURATION, POP a PoP number ("" is empty).
func ParsePoPSpan(v string) (PoPSpan, error) {
	if v == "" {
		return PoPSpan{}, nil
	}
	p, rest, err := popPrefix(v)
	if err != nil {
		return PoPSpan{}, err
	}
	s, err := ParseSpan(rest)
	return PoPSpan{PoP: p, Span: s}, err
}

// Crash is a PoP's process dying At an instant of the trace: it loses what
// it had not flushed to Redis and restarts at once as a new incarnation.
type Crash struct {
	PoP int
	At  time.Duration
}

// ParseCrash reads POP@TIME ("" is no crash).
func ParseCrash(v string) (Crash, bool, error) {
	if v == "" {
		return Crash{}, false, nil
	}
	p, rest, err := popPrefix(v)
	if err != nil {
		return Crash{}, false, err
	}
	at, err := time.ParseDuration(rest)
	if err != nil || at < 0 {
		return Crash{}, false, fmt.Errorf("%q: time %q is not a duration ≥ 0", v, rest)
	}
	return Crash{PoP: p, At: at}, true, nil
}

func popPrefix(v string) (int, string, error) {
	a, rest, ok := strings.Cut(v, "@")
	p, err := strconv.Atoi(a)
	if !ok || err != nil || p < 0 {
		return 0, "", fmt.Errorf("%q: want POP@..., POP a PoP number ≥ 0", v)
	}
	return p, rest, nil
}

// Faults are what goes wrong during a run. The zero value is a run without
// faults. Every draw they need (which gossip copy is lost or duplicated)
// comes from the run's seeded Links, so a seed gives the same faults.
type Faults struct {
	// RedisOutage: Redis refuses every call that reaches it in the span,
	// from every PoP; the refusal reaches the caller one way later.
	RedisOutage Span
	// Partition cuts one PoP from Redis and from its peers: calls it sends
	// and replies due to reach it in the span are lost (the call fails at
	// its timeout), and gossip to or from it in the span is lost.
	Partition PoPSpan
	// GossipLoss and GossipDup are the chances that one copy of a gossip
	// message (one sender to one receiver) is lost or delivered twice.
	GossipLoss, GossipDup float64
	// Crashes are PoP processes dying at an instant; see Crash.
	Crashes []Crash
	// RedisLoss is the instant of the run at which Redis loses every key
	// and every loaded script (a restart without persistence, a failover
	// to a replica that had none of the writes); 0: never. Calls reaching
	// Redis from then on find it empty.
	RedisLoss time.Duration
}

// Any reports whether f has any fault.
func (f Faults) Any() bool {
	return f.RedisOutage.Dur > 0 || f.Partition.Dur > 0 || f.GossipLoss > 0 || f.GossipDup > 0 || len(f.Crashes) > 0 || f.RedisLoss > 0
}

// Cut reports whether PoP p is partitioned at t.
func (f Faults) Cut(p int, t time.Duration) bool {
	return f.Partition.PoP == p && f.Partition.Has(t)
}

// Validate checks f against a deployment of pops PoPs.
func (f Faults) Validate(pops int) error {
	if f.Partition.Dur > 0 && f.Partition.PoP >= pops {
		return fmt.Errorf("partition: PoP %d of %d", f.Partition.PoP, pops)
	}
	for _, c := range f.Crashes {
		if c.PoP >= pops {
			return fmt.Errorf("crash: PoP %d of %d", c.PoP, pops)
		}
	}
	for _, r := range []float64{f.GossipLoss, f.GossipDup} {
		if !(r >= 0 && r <= 1) { // NaN too
			return fmt.Errorf("gossip loss and duplication are chances in [0, 1], got %g", r)
		}
	}
	if f.RedisLoss < 0 {
		return fmt.Errorf("redis loss at %v: want an instant of the run, after its start", f.RedisLoss)
	}
	return nil
}
