package budget

import (
	"slices"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/require"
)

// TestPropertyParkedDenialsJudged: one of TestPropertyRedisLosesState's
// runs, pinned by its seed, whose PoPs (configured as if alone, so each
// parks a denial Redis made for the grant its own batch in flight asked)
// resolve parked denials: the run's driver, as Limiter.AllowN, holds each
// parked request until Finish returns its Call and judges it then, paid
// or denied. The mutation it catches: a driver that takes a parked
// denial as final while Finish pays it from the grant (its spend reported
// to Redis, the judge never told): the judge then found a gossip deny
// wrong ("Redis had counted cur 1 prev 20 ... and admits a unit").
func TestPropertyParkedDenialsJudged(t *testing.T) {
	rdb, _ := redistest.Client(t)
	configs := append(slices.Clone(propConfigs), propAlone)
	const run = 76
	before := propParked
	msg := propertyRun(t, rdb, 18119216292619849684, propWindows[run%len(propWindows)], configs[run/len(propWindows)%len(configs)], true)
	require.Empty(t, msg)
	require.Greater(t, propParked, before, "the run parks denials: it tests their resolution")
}
