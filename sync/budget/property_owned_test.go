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
// (Item.Owned). Each identity's home moves to another PoP at a random
// instant with even odds, while the old one may still hold such a grant.
// The judge is TestPropertyBudget's: no admission passes the limit pure
// Redis would apply. The runs must make owned grants larger than a share
// of the headroom, or they test nothing of them.
//
// Such grants are rare here (about 15 in 100 runs: a lost or late reply,
// a call decided in another window than its stamp, or a crash leaves
// Redis' count of the window before unmatched by this PoP's, and the
// identity shared), so the mutations of the owned grant are caught only
// sometimes (three runs each, the failing seed printed): granting an
// owned item twice its want up to twice the headroom (lua: mmin(2 *
// want, 2 * h)), 1/3; its want whatever the headroom (lua: grant =
// want), 2/3. TestScriptGrantsWithinHeadroom catches both 3/3.
func TestPropertyOwned(t *testing.T) {
	before := propOwnedGrants // other tests' runs add to it
	propertyRuns(t, 100, []propConfig{propHome}, false)
	t.Logf("grants to owned identities past a share of the headroom: %d", propOwnedGrants-before)
	require.Positive(t, propOwnedGrants-before, "Redis granted some owned identities more than a share of the headroom")
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
