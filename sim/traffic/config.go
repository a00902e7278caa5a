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
	case c.Window < time.Millisecond:
		return errors.New("window must be at least 1ms")
	}
	return c.validateRate()
}
