package budget

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClaimTwoAheadNotDropped: the PoP's clock a little ahead of Redis'
// at a window boundary (PoP in x+1, Redis still in x), a decision Call
// gives up the PoP's free slots through x+3, its window plus
// giveUpAhead. The script applies claims of Redis' windows w−1..w+2 only,
// so the claim of x+3 is not applied; the PoP must send it again (the
// next Sync, once Redis is in x+1), or Redis keeps reserving the slot
// this PoP gave up for all of x+3 (quota lost). Caught mutation: the PoP
// taking every claim it sent as applied (K of x+3 stays 0).
func TestClaimTwoAheadNotDropped(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	m := leaseMachine(t, "a", 1, 1, 2)
	x := int64(77)
	pop := (x+1)*testWindow + 10 // the PoP's clock: window x+1
	skew := int64(30)            // Redis' clock: 30 ms behind, window x
	takeLease(t, rdb, m, pop-5)

	_, c := m.Request(pop, "k", 2) // one unit from the free slot of x+1, one at Redis
	require.NotNil(t, c)
	require.Contains(t, c.Items[0].Claims, x+3, "the decision Call gives up the slots through x+1+giveUpAhead")
	r, err := Exec(ctx, rdb, m, c, pop-skew)
	require.NoError(t, err)
	require.Equal(t, x, r.Window, "Redis is still in x")
	d := m.Complete(pop+5, c, r, err)
	require.True(t, d.Allowed)
	require.Zero(t, readState(t, rdb, m, "k", x+3).K, "the script applied no claim of w+3")

	for i := int64(1); i <= 3; i++ { // Syncs, Redis now in x+1 too
		at := pop + i*100
		calls := m.Tick(at)
		res, errs := ExecAll(ctx, rdb, m, calls, at-skew)
		for j, c := range calls {
			require.NoError(t, errs[j])
			m.Finish(c, res[j], errs[j])
		}
	}
	assert.Equal(t, int64(1), readState(t, rdb, m, "k", x+3).K, "the slot of x+3 this PoP gave up is claimed at Redis, once")
	assert.Equal(t, int64(1), readState(t, rdb, m, "k", x+2).K, "x+2's once")
}
