package engine

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/sim/netmodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFaultRowsCountPureRedisLostUnits: pure Redis' units admitted
// uncounted (its calls failing open) are in the fault rows of the
// requests that lost them: a Redis outage's row counts some, the rows
// together count no more than the run's LostHits (requests sent just
// before a fault and failing in it fall in no row), and a budget mode,
// which does not measure them, shows -1 in every row. It catches the
// rows' lost hits left at -1 for pure Redis (as they were), and units
// counted in a row that holds none of the requests that lost them.
func TestFaultRowsCountPureRedisLostUnits(t *testing.T) {
	e := testEnv(t, "mixed")
	third := e.Trace.Duration / 3
	f := netmodel.Faults{RedisOutage: netmodel.Span{Start: third, Dur: 700 * time.Millisecond},
		Partition: netmodel.PoPSpan{PoP: 1, Span: netmodel.Span{Start: 2 * third, Dur: 500 * time.Millisecond}}}
	for _, mode := range []string{"redis", "budget"} {
		e := faultEnv(t, f)
		r, err := Run(context.Background(), e, mode)
		require.NoError(t, err)
		require.Len(t, r.Faults, 2, "%s: one row per fault", mode)
		if mode == "budget" {
			for _, c := range r.Faults {
				assert.Equal(t, int64(-1), c.LostHits, "%s: %s: not measured", mode, c.Fault)
			}
			continue
		}
		require.Positive(t, r.LostHits, "pure Redis failed some calls open")
		assert.Positive(t, r.Faults[0].LostHits, "%s: the outage's row counts the units its failed calls admitted", r.Faults[0].Fault)
		assert.GreaterOrEqual(t, r.Faults[1].LostHits, int64(0), "%s: measured", r.Faults[1].Fault)
		assert.LessOrEqual(t, r.Faults[0].LostHits+r.Faults[1].LostHits, r.LostHits, "the rows count each lost unit once at most")
	}
}
