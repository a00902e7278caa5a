package traffic

import (
	"math/rand/v2"
	"time"
)

// gen accumulates a trace: the random source, the identities handed out so
// far and the requests made.
type gen struct {
	c       Config
	rng     *rand.Rand
	dur     time.Duration
	nextID  int
	reqs    []Request
	classOf []uint8 // by identity
	shape   shape   // the scenario's departures (shapes)
}

func newGen(c Config) *gen {
	return &gen{c: c, rng: rand.New(rand.NewPCG(c.Seed, 0x9e3779b97f4a7c15)),
		dur: c.Duration(), reqs: make([]Request, 0, c.Requests),
		classOf: make([]uint8, c.Identities), shape: shapes[c.Scenario]}
}

// windows is how many windows of the limit the trace lasts: Windows unless
// Config.Rate sized it.
func (g *gen) windows() float64 { return float64(g.dur) / float64(g.c.Window) }

// claim hands out up to n fresh identities and returns the first one and
// how many were given.
func (g *gen) claim(n int) (first, got int) {
	first = g.nextID
	got = min(n, g.c.Identities-g.nextID)
	g.nextID += got
	return first, got
}

// between is a uniform time in [from, to) at microsecond resolution.
func (g *gen) between(from, to time.Duration) time.Duration {
	span := int64((to - from) / time.Microsecond)
	if span <= 0 {
		return from
	}
	return from + time.Duration(g.rng.Int64N(span))*time.Microsecond
}

// uniform is a float in [lo, hi).
func (g *gen) uniform(lo, hi float64) float64 { return lo + (hi-lo)*g.rng.Float64() }

// emit adds count single-unit requests of id at uniform times in [from, to),
// each at a PoP chosen by pops.
func (g *gen) emit(id, count int, from, to time.Duration, pops popChooser) {
	for range count {
		g.reqs = append(g.reqs, Request{At: g.between(from, to), ID: int32(id),
			PoP: int16(pops.pick(g.rng)), N: 1})
	}
}
