package traffic

import "fmt"

// Scenarios lists the traffic shapes Generate knows, the default first.
var Scenarios = []string{"mixed", "spread-attack", "pinned", "flash-crowd", "near-limit", "edge"}

// share is the part of the request budget one class of identities gets.
type share struct {
	class  class
	budget float64
}

// shape is how a scenario departs from the others: its calm popularity's
// exponent (0: zipfExponent), and whether each non-calm class takes only
// the identities it sends from (tight) instead of a tenth of them all
// (classShare), leaving the rest to the calm population.
type shape struct {
	zipf  float64
	tight bool
}

// shapes are the scenarios that have one.
var shapes = map[string]shape{"edge": {zipf: 1.1, tight: true}}

var recipes = map[string][]share{
	"mixed":         {{attackers, 0.30}, {near, 0.20}, {bursts, 0.10}, {calm, 0.40}},
	"spread-attack": {{spreadAttackers, 0.70}, {calm, 0.30}},
	"pinned":        {{pinnedAttackers, 0.25}, {pinnedNear, 0.25}, {calm, 0.50}},
	"flash-crowd":   {{crowd, 0.60}, {calm, 0.40}},
	"near-limit":    {{nearSpread, 0.70}, {calm, 0.30}},
	// edge is what an edge sees (docs/tradeoffs.md §4): a small share of
	// abusive identities spread over every PoP, a warm head at its limit
	// near its home PoP, and a large calm population pinned to home PoPs
	// with Zipf popularity of exponent 1.1 (shapes).
	"edge": {{attackers, 0.05}, {warm, 0.15}, {calm, 0.80}},
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
