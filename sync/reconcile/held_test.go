package reconcile

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/redistest"
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
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	rdb.HSet(ctx, gk, "B", "3:1000100")
	for i, want := range []bool{true, true, false} { // 5 − 3 held by B
		if got := decide(held); got != want {
			t.Fatalf("decision %d with 3 units held by B: %v, want %v", i, got, want)
		}
	}
	if !decide(nil) { // without Held, B's units are not weighed
		t.Fatal("a decision without Held weighed the allowance hash")
	}
	for _, rec := range []string{"0:1000100:o", "0:1000100:r"} {
		rdb.Del(ctx, gk, Key("el", "k", 1))
		rdb.HSet(ctx, gk, "B", rec)
		if decide(held) {
			t.Fatalf("admitted while B's record is %q", rec)
		}
		if v := rdb.HGet(ctx, gk, "A").Val(); !strings.HasPrefix(v, "0:1000300") {
			t.Fatalf("A's record %q after asking while B is %q, want 0:%d", v, rec, now+lease)
		}
	}
	rdb.Del(ctx, gk, Key("el", "k", 1))
	rdb.HSet(ctx, gk, "B", "0:999700:o") // expired one lease ago
	if !decide(held) {
		t.Fatal("an ownership expired one lease ago still denies")
	}
}
