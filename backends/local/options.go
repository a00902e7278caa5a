package local

import (
	"fmt"
	"runtime"

	"github.com/edgelimit/edgelimit/core"
)

// DefaultCapacity is the number of identities held when WithCapacity is not
// given.
const DefaultCapacity = 1 << 20

// DefaultShards returns the number of independently locked shards used when
// WithShards is not given: the power of two at or above 4 × GOMAXPROCS, at
// most 256. More shards cut lock contention across cores, but each shard's
// LRU list and map are colder in the CPU cache, which costs every call; on 2
// cores 8 and 64 shards measured the same.
func DefaultShards() int {
	n := 1
	for n < 4*runtime.GOMAXPROCS(0) && n < 256 {
		n *= 2
	}
	return n
}

// Option configures a Limiter in New.
type Option func(*config) error

type config struct {
	capacity int
	shards   int
	clock    core.Clock
	mono     Monotonic // nil: see monotonicOf
}

func defaultConfig() config {
	return config{capacity: DefaultCapacity, shards: DefaultShards(), clock: core.SystemClock{}}
}

// WithCapacity bounds the identities held in total to n (n ≥ 1). A stream of
// new identities never grows memory past it: the least recently used
// identity of the full shard is forgotten. New returns an error matching
// core.ErrInvalid when n < 1.
func WithCapacity(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("%w: capacity %d < 1", core.ErrInvalid, n)
		}
		c.capacity = n
		return nil
	}
}

// WithShards sets the number of independently locked shards; n must be a
// power of two. More shards mean less lock contention across cores and an
// LRU order that is per shard rather than global. When n exceeds the
// capacity, the shard count is lowered to the largest power of two not above
// it. New returns an error matching core.ErrInvalid for other n.
func WithShards(n int) Option {
	return func(c *config) error {
		if n < 1 || n&(n-1) != 0 {
			return fmt.Errorf("%w: shards %d is not a power of two", core.ErrInvalid, n)
		}
		c.shards = n
		return nil
	}
}

// WithClock sets the clock Allow reads (default core.SystemClock). Allow
// reads it as milliseconds when core.MilliClockOf accepts it, else through
// Now. The caller owns the clock: a core.CoarseClock is not stopped by the
// limiter. States are aged by the clock's monotonic reading when it
// implements Monotonic (core.SystemClock and core.CoarseClock do), unless
// WithMonotonic gives a source, else by their stamps alone. A nil clock is
// an error matching core.ErrInvalid.
func WithClock(clk core.Clock) Option {
	return func(c *config) error {
		if clk == nil {
			return fmt.Errorf("%w: nil clock", core.ErrInvalid)
		}
		c.clock = clk
		return nil
	}
}
