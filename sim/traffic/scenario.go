package traffic

import "fmt"

// Scenarios lists the traffic shapes Generate knows, the default first.
var Scenarios = []string{"mixed", "spread-attack", "pinned", "flash-crowd", "near-limit"}

// share is the part of the request budget one class of identities gets.
type share struct {
	class  class
	budget float64
}

var recipes = map[string][]share{
	"mixed":         {{attackers, 0.30}, {near, 0.20}, {bursts, 0.10}, {calm, 0.40}},
	"spread-attack": {{spreadAttackers, 0.70}, {calm, 0.30}},
	"pinned":        {{pinnedAttackers, 0.25}, {pinnedNear, 0.25}, {calm, 0.50}},
	"flash-crowd":   {{crowd, 0.60}, {calm, 0.40}},
	"near-limit":    {{nearSpread, 0.70}, {calm, 0.30}},
}

func known(s string) bool {
	_, ok := recipes[s]
	return ok
}

// Generate builds the trace of c. It is deterministic: the same Config gives
// the same requests in the same order.
func Generate(c Config) (*Trace, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	g := newGen(c)
	for _, s := range recipes[c.Scenario] {
		g.fill(s.class, int(s.budget*float64(c.Requests)))
	}
	if len(g.reqs) == 0 {
		return nil, fmt.Errorf("scenario %s made no requests", c.Scenario)
	}
	sortRequests(g.reqs)
	return &Trace{Config: c, Duration: g.dur, Requests: g.reqs,
		Classes: ClassNames(), ClassOf: g.classOf, Seeded: true}, nil
}
