package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClusterBatchIsOneScriptPerMaster: on a real 3-master Redis Cluster,
// a Flush and a FlushEscrow of 60 identities spread over every master run
// one script per master (INFO commandstats summed over the masters), not
// one per identity, and reply exactly what the one-script-per-identity
// path replies to the same calls in another namespace: the same fields,
// priors and grants, item by item, over three rounds of growing counts.
func TestClusterBatchIsOneScriptPerMaster(t *testing.T) {
	c, _ := redistest.Cluster(t)
	ctx := context.Background()
	batched := New(c, "xb", "pa", time.Minute)
	single := New(c, "xs", "pa", time.Minute)
	single.cross.Store(crossRefused)
	items := make([]Item, 60)
	escrow := make([]EscrowItem, 60)
	p := EscrowParams{Now: 1_000_000, Elapsed: 3_000, WindowMillis: 10_000, Max: 100, Lease: time.Second}
	for round := int64(1); round <= 3; round++ {
		for i := range items {
			items[i] = Item{Key: fmt.Sprintf("user:%d", i), Index: 100, Own: [2]int64{round * int64(i%7+1), round}}
			escrow[i] = EscrowItem{Item: Item{Key: fmt.Sprintf("esc:%d", i), Index: 100, Own: items[i].Own}, Want: round * 3}
		}
		before := scriptCalls(t, c)
		got, err := batched.Flush(ctx, items)
		require.NoError(t, err)
		gotRes, gotGrants, err := batched.FlushEscrow(ctx, escrow, p)
		require.NoError(t, err)
		calls := scriptCalls(t, c) - before
		require.Equal(t, int64(6), calls, "round %d: %d script calls for two batches of 60 identities on 3 masters, want 6 (one per master each)", round, calls)
		want, err := single.Flush(ctx, items)
		require.NoError(t, err)
		wantRes, wantGrants, err := single.FlushEscrow(ctx, escrow, p)
		require.NoError(t, err)
		// one per identity (the first round also retries after NOSCRIPT)
		d := scriptCalls(t, c) - before - 6
		require.GreaterOrEqual(t, d, int64(120), "round %d: the per-identity path ran %d scripts for 120 identities", round, d)
		if round > 1 {
			require.Equal(t, int64(120), d, "round %d: the per-identity path ran %d scripts for 120 identities", round, d)
		}
		sameResults(t, fmt.Sprintf("round %d flush", round), got, want)
		sameResults(t, fmt.Sprintf("round %d escrow", round), gotRes, wantRes)
		require.Equal(t, wantGrants, gotGrants, "round %d: grants %v, per identity %v", round, gotGrants, wantGrants)
	}
	require.Equal(t, crossWorks, batched.cross.Load(), "cross-slot state %d after working calls", batched.cross.Load())
}

// sameResults compares replies ignoring Redis' clock.
func sameResults(t *testing.T, what string, got, want []Result) {
	t.Helper()
	require.Len(t, got, len(want), "%s: %d results, want %d", what, len(got), len(want))
	for i := range got {
		g, w := got[i], want[i]
		g.ServerMillis, w.ServerMillis = 0, 0
		require.Equal(t, w, g, "%s item %d: %+v, per identity %+v", what, i, g, w)
	}
}

// scriptCalls sums EVAL and EVALSHA calls over the cluster's masters.
func scriptCalls(t *testing.T, c *redis.ClusterClient) int64 {
	t.Helper()
	var total int64
	mu := make(chan struct{}, 1)
	err := c.ForEachMaster(context.Background(), func(ctx context.Context, n *redis.Client) error {
		info, err := n.Info(ctx, "commandstats").Result()
		if err != nil {
			return err
		}
		var sum int64
		for _, line := range strings.Split(info, "\n") {
			name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
			if ok && (name == "cmdstat_evalsha" || name == "cmdstat_eval") {
				var calls int64
				fmt.Sscanf(rest, "calls=%d", &calls)
				sum += calls
			}
		}
		mu <- struct{}{}
		total += sum
		<-mu
		return nil
	})
	require.NoError(t, err)
	return total
}

// TestCrossSlotRefusalFallsBack: a server that cannot compile the flagged
// script (a Redis before 7.0) or refuses its keys' slots turns the Store
// to one script per identity for good, unless cross-slot calls already
// worked (then the error is the call's own); other errors change nothing.
func TestCrossSlotRefusalFallsBack(t *testing.T) {
	for _, tc := range []struct {
		err      string
		before   int32
		refused  bool
		endState int32
	}{
		{"ERR Error compiling script (new function): user_script:1: unexpected symbol near '#'", crossUnknown, true, crossRefused},
		{"CROSSSLOT Keys in request don't hash to the same slot", crossUnknown, true, crossRefused},
		{"CROSSSLOT Keys in request don't hash to the same slot", crossWorks, false, crossWorks},
		{"dial tcp: connection refused", crossUnknown, false, crossUnknown},
	} {
		s := &Store{}
		s.cross.Store(tc.before)
		got := s.crossSlotResult(errors.New(tc.err))
		if assert.Equal(t, tc.refused, got, "%q from state %d: refused %v, state %d; want %v, %d", tc.err, tc.before, got, s.cross.Load(), tc.refused, tc.endState) {
			assert.Equal(t, tc.endState, s.cross.Load(), "%q from state %d: refused %v, state %d; want %v, %d", tc.err, tc.before, got, s.cross.Load(), tc.refused, tc.endState)
		}
	}
	s := &Store{}
	if assert.False(t, s.crossSlotResult(nil), "a working call left state %d", s.cross.Load()) {
		assert.Equal(t, crossWorks, s.cross.Load(), "a working call left state %d", s.cross.Load())
	}
}
