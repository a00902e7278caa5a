package traffic

import (
	"errors"
	"fmt"
	"time"
)

// MaxIdentities bounds Config.Identities (identities are numbered in an
// int32).
const MaxIdentities = 1 << 26

// Config sizes a scenario. The zero value is invalid; see DefaultConfig.
type Config struct {
	Scenario   string        // one of Scenarios
	PoPs       int           // points of presence, at least 1
	Identities int           // distinct identities, at least 1
	Requests   int           // request budget, at least 1
	Limit      int64         // units admitted per window, at least 1
	Window     time.Duration // at least 1ms
	Seed       uint64        // same seed, same trace
	Rate       float64       // requests per second per PoP; 0: the trace lasts Windows windows
	// CrowdSpan is how long a flash-crowd identity's burst takes to
	// arrive; 0: a fifth of the Window (DefaultCrowdSpan). Only the
	// arrival times of the crowd's requests depend on it.
	CrowdSpan time.Duration
}

// DefaultCrowdSpan is Config.CrowdSpan's default for window: a fifth of it.
func DefaultCrowdSpan(window time.Duration) time.Duration { return window / 5 }

// crowdSpan is how long a crowd's burst takes to arrive.
func (c Config) crowdSpan() time.Duration {
	if c.CrowdSpan == 0 {
		return DefaultCrowdSpan(c.Window)
	}
	return c.CrowdSpan
}

// validateCrowdSpan checks CrowdSpan: positive when set, and short enough
// that a burst starting just past the trace's middle (by up to a tenth of
// a window) ends within it.
func (c Config) validateCrowdSpan() error {
	if c.CrowdSpan == 0 {
		return nil
	}
	most := c.Duration()/2 - c.Window/10
	switch {
	case c.CrowdSpan < 0:
		return fmt.Errorf("crowd-span %s: want a positive duration", c.CrowdSpan)
	case c.CrowdSpan > most:
		return fmt.Errorf("crowd-span %s: longer than the %s from a crowd's start to the trace's end (half the trace less a tenth of a window)", c.CrowdSpan, most)
	}
	return nil
}

// DefaultConfig is the default run of pop-sim: sized so that every mode of
// it finishes in well under two minutes on a 2-core machine.
func DefaultConfig() Config {
	return Config{Scenario: "mixed", PoPs: 8, Identities: 20000, Requests: 200000,
		Limit: 100, Window: 10 * time.Second, Seed: 1}
}

// Validate reports the first size that cannot be simulated.
func (c Config) Validate() error {
	switch {
	case !known(c.Scenario):
		return fmt.Errorf("unknown scenario %q (want one of %v)", c.Scenario, Scenarios)
	case c.PoPs < 1:
		return errors.New("pops must be at least 1")
	case c.PoPs > 1000:
		return errors.New("pops must be at most 1000")
	case c.Identities < 1:
		return errors.New("identities must be at least 1")
	case c.Identities > MaxIdentities:
		return fmt.Errorf("identities must be at most %d", MaxIdentities)
	case c.Requests < 1:
		return errors.New("requests must be at least 1")
	case c.Limit < 1:
		return errors.New("limit must be at least 1")
	case c.Window < time.Millisecond || c.Window%time.Millisecond != 0:
		return errors.New("window must be a whole number of milliseconds, at least 1ms")
	}
	if err := c.validateRate(); err != nil {
		return err
	}
	return c.validateCrowdSpan()
}
