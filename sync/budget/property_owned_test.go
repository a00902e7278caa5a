package budget

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPropertyOwned runs the random interleavings of TestPropertyBudget
// (duplicated, reordered and lost calls and replies, crashes, retried
// batches, gossip) where each identity's requests come from one home PoP,
// so Redis soon calls it contested with every unit it counted this PoP's:
// the PoP owns it, and its top-ups are granted up to the whole headroom
// (Item.Divisor 1). Each identity's home moves to another PoP at a random
// instant with even odds, while the old one may still hold such a grant;
// the odd PoPs run NoWait, whose items carry the PoP's part of the
// identity's counted units as a divisor (1 where it served most of them,
// up to P). The judge is TestPropertyBudget's: no admission passes the
// limit pure Redis would apply. The runs must make grants larger than
// the equal share of the headroom to items of divisor 1 and of divisors
// from 2 to P, or they test nothing of them (about 600 and 120 in 100
// runs).
//
// Mutations of the script's grant, three runs each (the failing seed
// printed): granting an item of divisor 1 twice its want up to twice the
// headroom (lua: mmin(2 * want, 2 * h)), 3/3; its want whatever the
// headroom, 3/3; an item of divisor 2 to P up to twice the headroom,
// 0/3 (its want seldom passes the headroom); its want whatever the
// headroom, 2/3. TestScriptGrantsWithinHeadroom catches all four 3/3.
func TestPropertyOwned(t *testing.T) {
	whole, split := propWholeGrants, propSplitGrants // other tests' runs add to them
	propertyRuns(t, 100, []propConfig{propHome}, false)
	t.Logf("grants past the equal share of the headroom: %d by divisor 1, %d by a divisor from 2 to P", propWholeGrants-whole, propSplitGrants-split)
	require.Positive(t, propWholeGrants-whole, "Redis granted some items of divisor 1 (owned, or most of the demand under NoWait) more than the equal share of the headroom")
	require.Positive(t, propSplitGrants-split, "Redis granted some items of a divisor from 2 to P more than the equal share of the headroom")
}

// homes draws each key's home PoP and, with even odds, the instant in
// [start, horizon) its home moves to another PoP; it returns
// the PoP a request of key at at comes from (p, the PoP drawn for it
// otherwise, is ignored).
func homes(rng *rand.Rand, keys []string, start, horizon int64) func(p int, key string, at int64) int {
	type home struct {
		first, then int
		move        int64
	}
	h := map[string]home{}
	for _, k := range keys {
		first := rng.IntN(propPoPs)
		hm := home{first: first, then: first, move: horizon}
		if rng.IntN(2) == 0 {
			hm.then = (first + 1 + rng.IntN(propPoPs-1)) % propPoPs
			hm.move = start + rng.Int64N(horizon-start)
		}
		h[k] = hm
	}
	return func(_ int, key string, at int64) int {
		if hm := h[key]; at >= hm.move {
			return hm.then
		} else {
			return hm.first
		}
	}
}
