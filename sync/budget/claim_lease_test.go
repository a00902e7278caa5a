package budget

import (
	"context"
	"fmt"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/require"
)

// TestClaimPastTheLeaseNotSent: a claim Redis counts (K_y) must be of a
// window in which Redis counts the claiming PoP among the spenders (its
// lease), or R_y = c·(n − K) reserves nothing for another PoP that is
// counted there and has not given its slot up. PoP A's Sync batch, planned
// in window X with its lease renewed through X+3, runs at Redis in window
// X+2 (a stall of a little over a window) and names the identity hot:
// Finish gives its slots up through X+2+giveUpAhead = X+4. A request
// stamped in window X (its time read before a slow handoff; forget.go)
// then asks Redis: its lease reaches X+3 ≥ X+3, so the Call announces
// nothing, yet it carries the claim of X+4, which Redis counts (X+4 is
// within its window + 2) while A is not counted in X+4. (With slots
// given up one window ahead the claim reached X+3, inside the lease.)
func TestClaimPastTheLeaseNotSent(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	run := func(m *Machine, c *Call, now int64) *Result {
		r, err := Exec(ctx, rdb, m, c, now)
		require.NoError(t, err)
		return r
	}
	const X = int64(1000)
	at := func(x, off int64) int64 { return x*testWindow + off }
	a := leaseMachine(t, "a", 1, 1, 2)
	b := leaseMachine(t, "b", 2, -1, 2) // no free credit: fills the identity
	// A's lease through X+2, from window X−1
	for _, c := range a.Tick(at(X-1, 100)) {
		a.Finish(c, run(a, c, at(X-1, 100)), nil)
	}
	require.Equal(t, X+2, a.groups[0].leased)
	// window X: A's Sync renews through X+3 (its batch stalls), and a
	// request of 2 units asks Redis (its free slot pays one)
	calls := a.Tick(at(X, 100))
	require.Len(t, calls, 1)
	stalled := calls[0]
	require.Equal(t, X+3, stalled.announce)
	_, c1 := a.Request(at(X, 200), "k", 2)
	require.NotNil(t, c1)
	require.Equal(t, a.Complete(at(X, 210), c1, run(a, c1, at(X, 200)), nil).Allowed, true)
	require.Equal(t, X+3, a.groups[0].leased)
	// window X+2: B admits 5 units at Redis (busy: Redis names k hot)
	_, cb := b.Request(at(X+2, 50), "k", 5)
	require.NotNil(t, cb)
	require.True(t, b.Complete(at(X+2, 60), cb, run(b, cb, at(X+2, 50)), nil).Allowed)
	// A's stalled batch runs now, in X+2: k is named hot
	r := run(a, stalled, at(X+2, 100))
	require.Equal(t, []HotKey{{Key: "k", Bucket: a.bucket("k")}}, r.Hot)
	a.Finish(stalled, r, nil)
	require.Equal(t, X+3, a.groups[0].leased, "A is counted through X+3")
	// a request stamped in window X asks Redis with A's report
	_, c2 := a.Request(at(X, 5000), "k", 1)
	require.NotNil(t, c2)
	t.Logf("claims %v announce %d leased %d", c2.Items[0].Claims, c2.announce, a.groups[0].leased)
	run(a, c2, at(X+2, 200))
	// Redis' record: A's announcements reach X+3; K of X+4 for k
	fc, err := rdb.HGet(ctx, a.tag(0)+":fc", fmt.Sprint(X+4)).Int64()
	if err != nil {
		fc = 0
	}
	counted := fc >> 32
	k, err := rdb.Eval(ctx, `local v = redis.call('HGET', KEYS[1], ARGV[1]) if not v then return 0 end local _, _, k = cmsgpack.unpack(v) return k`,
		[]string{fmt.Sprintf("%s:b%d:e%d", a.tag(0), a.bucket("k"), (X+4)/2)}, "k").Int64()
	require.NoError(t, err)
	require.LessOrEqual(t, k, counted, "K of window X+4 (%d claims) counts a claim of a PoP Redis does not count there (%d spenders counted)", k, counted)
}
