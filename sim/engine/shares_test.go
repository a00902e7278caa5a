package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSharesSplitByIdentityKeepingOrder(t *testing.T) {
	e := testEnv(t, "mixed")
	order := make([]int, len(e.Trace.Requests))
	for i := range order {
		order[i] = len(order) - 1 - i // reversed: a share must keep this order, not the trace's
	}
	shares := e.shares(order)
	pos := make(map[int]int, len(order)) // request → its place in order
	for k, i := range order {
		pos[i] = k
	}
	seen := 0
	for w, share := range shares {
		for k, i := range share {
			id := int(e.Trace.Requests[i].ID)
			require.EqualValues(t, w, id%redisLanes, "request %d of identity %d in worker %d's share", i, id, w)
			if k > 0 {
				require.LessOrEqual(t, pos[share[k-1]], pos[i], "worker %d's share has request %d before %d, against order", w, share[k-1], i)
			}
		}
		seen += len(share)
	}
	require.EqualValues(t, len(order), seen, "shares hold %d requests, want %d", seen, len(order))
}
