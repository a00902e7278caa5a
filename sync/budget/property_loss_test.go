package budget

import (
	"slices"
	"testing"
)

// TestPropertyRedisLosesState is TestPropertyBudget's random runs, and
// TestPropertyLease's (every PoP configured as if alone, so that free
// credit Redis counted through leases is what reserves it), with Redis
// losing every key and every loaded script at a random instant of the
// run's windows 2 to 5 (FLUSHALL and SCRIPT FLUSH: a restart without
// persistence, or a failover to a replica that had none of it). Nothing a
// PoP holds can bring the lost counts back, so the judge allows what was
// forgotten (judge): up to Max more in the loss's window L and the two
// after it (the counts, and the grants PoPs still held and spend unseen
// until they report them), and 2c·P more through L + 4 (free credit
// leased before the loss, which only each caller's own configuration
// reserves afterwards). From L + 5 on the invariant holds as before the
// loss, and every run must have a Machine apply a reply after L + 4:
// retry guards, sequence windows and the hot cursor start again (a batch
// or report Redis applied before the loss is applied once more, as the
// loss took its effect too), every Call runs (EVALSHA refused, EVAL), and
// what a Machine keeps from the lost keys (its lease, the check records it
// counts as made) runs out within L + 3.
//
// What the relaxation rests on, measured with a probe of the judge (each
// admission's estimate less the allowance without the loss, the worst per
// window after the loss; not committed), 300 runs of each configuration:
// free credit at every PoP +3.4, +5.0 in L, L + 1, nothing over after;
// no free credit +11.3, +9.4, nothing after; mixed +8.1, +8.3, nothing
// after; PoPs configured as if alone +7.0, +8.3, +4.0, +3.8, +0.8 in
// L .. L + 4, nothing from L + 5 (against Max 20 and 2c·P 8). A review's
// probe found +0.27 in L + 2 without free credit (grants of L spent
// unseen in L + 1, which an estimate of L + 2 weighs): so the Max term
// through L + 2, the free credit's through L + 4, and no further.
//
// What it catches: a Machine or script that cannot go on after the loss
// (a script error, or no reply applied after L + 4 in a run), and any
// admission past the relaxation.
func TestPropertyRedisLosesState(t *testing.T) {
	propertyRuns(t, 80, append(slices.Clone(propConfigs), propAlone), true)
}
