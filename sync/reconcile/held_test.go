package reconcile

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/require"
)

// TestDecideWeighsHeld: a decision with DecideArgs.Held weighs the
// identity's allowance hash. Units another PoP holds leave that much less
// room; while another PoP owns the identity, or releases it, nothing is
// admitted and the caller is recorded as asking (so the owner's next
// escrow batch releases it); an expired record (one lease past its
// expiry) weighs nothing. Without Held the hash is not read.
func TestDecideWeighsHeld(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	a := New(rdb, "el", "A", time.Second)
	const now, lease = 1_000_000, 300
	held := &Held{Now: now, Lease: lease * time.Millisecond}
	gk := GrantKey("el", "k")
	decide := func(h *Held) bool {
		t.Helper()
		ok, _, err := a.Decide(ctx, DecideArgs{Item: Item{Key: "k", Index: 1}, N: 1, Max: 5, WindowMillis: 1000, Held: h})
		require.NoError(t, err)
		return ok
	}
	rdb.HSet(ctx, gk, "B", "3:1000100")
	for i, want := range []bool{true, true, false} { // 5 − 3 held by B
		got := decide(held)
		require.Equal(t, want, got, "decision %d with 3 units held by B: %v, want %v", i, got, want)
	}
	// without Held, B's units are not weighed
	require.True(t, decide(nil), "a decision without Held weighed the allowance hash")
	for _, rec := range []string{"0:1000100:o", "0:1000100:r"} {
		rdb.Del(ctx, gk, Key("el", "k", 1))
		rdb.HSet(ctx, gk, "B", rec)
		require.False(t, decide(held), "admitted while B's record is %q", rec)
		v := rdb.HGet(ctx, gk, "A").Val()
		require.True(t, strings.HasPrefix(v, "0:1000300"), "A's record %q after asking while B is %q, want 0:%d", v, rec, now+lease)
	}
	rdb.Del(ctx, gk, Key("el", "k", 1))
	rdb.HSet(ctx, gk, "B", "0:999700:o") // expired one lease ago
	require.True(t, decide(held), "an ownership expired one lease ago still denies")
}
