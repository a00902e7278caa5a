package traffic

import "math/rand/v2"

// popChooser picks the PoP each request of one identity arrives at.
type popChooser struct {
	set []int // candidate PoPs; nil means all of them
	all int
}

func (p popChooser) pick(r *rand.Rand) int {
	if p.set == nil {
		return r.IntN(p.all)
	}
	return p.set[r.IntN(len(p.set))]
}

// pinned sends everything to one home PoP.
func (g *gen) pinned() popChooser {
	return popChooser{set: []int{g.rng.IntN(g.c.PoPs)}}
}

// spread sends each request to any PoP, evenly.
func (g *gen) spread() popChooser { return popChooser{all: g.c.PoPs} }

// few sends to a home PoP and one or two of its neighbours.
func (g *gen) few() popChooser {
	home := g.rng.IntN(g.c.PoPs)
	n := min(g.c.PoPs, 2+g.rng.IntN(2))
	set := make([]int, n)
	for i := range set {
		set[i] = (home + i) % g.c.PoPs
	}
	return popChooser{set: set}
}

// half is pinned or spread, one chance in two.
func (g *gen) half(other func() popChooser) popChooser {
	if g.rng.IntN(2) == 0 {
		return g.pinned()
	}
	return other()
}
