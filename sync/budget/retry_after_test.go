package budget

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRetryAfterHonestAtSeveralPoPs: three PoPs of one identity (limit
// 10, free credit 1, so Redis reserves a unit of every window for each
// PoP that has not given its slot up). PoP a spends 6 to 10 units a third
// into a window; PoP b's AllowN of 3 to 6 units is denied. Its RetryAfter
// is when they fit if nothing else happens, reservations of the windows
// after this one included: a PeekN of them 1 ms before it is denied, and
// AllowN at it is admitted. The conformance suite's RetryAfterIsHonest runs
// one PoP, where no slot is reserved for another. Mutations it catches:
// the wait for a reservation of the next window taken as that window's
// start (b denied again at its RetryAfter, short by up to 2.9 s), the
// next window's reservation or its grants left out of its estimate (the
// same), a wait of four windows whenever the reservation binds (the
// early PeekN admitted).
func TestRetryAfterHonestAtSeveralPoPs(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	denied := 0
	for spend := int64(6); spend <= 10; spend++ {
		for n := int64(3); n <= 6; n++ {
			clk := core.NewManualClock(time.UnixMilli(w0 + 5))
			ns := fmt.Sprintf("ra%d-%d", spend, n)
			mk := func(pop string) *Limiter {
				l, err := New(Config{PoP: pop, Namespace: ns, Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 3, FreeCredit: 1}, rdb, clk)
				require.NoError(t, err)
				t.Cleanup(func() { _ = l.Close(ctx) })
				return l
			}
			a, b := mk("a"), mk("b")
			clk.Advance(testWindow / 3 * time.Millisecond)
			for range spend {
				_, err := a.AllowN(ctx, "k", clk.Now(), 1)
				require.NoError(t, err)
			}
			d, err := b.AllowN(ctx, "k", clk.Now(), n)
			require.NoError(t, err)
			if d.Allowed {
				continue
			}
			denied++
			require.Positive(t, d.RetryAfter, "a spent %d, b's %d units denied: %+v", spend, n, d)
			clk.Advance(d.RetryAfter - time.Millisecond)
			early, err := b.PeekN(ctx, "k", clk.Now(), n)
			require.NoError(t, err)
			assert.False(t, early.Allowed, "a spent %d: b's %d units fit 1 ms before the RetryAfter %s", spend, n, d.RetryAfter)
			clk.Advance(time.Millisecond)
			again, err := b.AllowN(ctx, "k", clk.Now(), n)
			require.NoError(t, err)
			assert.True(t, again.Allowed, "a spent %d: b's %d units denied again after waiting the RetryAfter %s: %+v", spend, n, d.RetryAfter, again)
		}
	}
	assert.Equal(t, 20, denied, "every case denied first: the reservations bind")
}
