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

// TestPeekNAtASecondPoPDecidesAsAllowN: PoP a spends 4 to 10 units of an
// identity (limit 10, 3 PoPs, free credit 1); PoP b, which has not served
// it, peeks at 1 to 8 units and then asks AllowN of as many: the peek is
// allowed exactly when AllowN admits, both for a b that holds no
// free-credit lease yet (new: it may not spend or give up a free slot)
// and for one that does (both PoPs served other identities for four
// windows). Mutation it catches: PeekDone counting the free slots into
// the room whether or not this PoP holds a lease (an unleased b's PeekN of 1
// allowed where AllowN denies), or its slot of the window whether
// or not its lease covers it.
func TestPeekNAtASecondPoPDecidesAsAllowN(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	for _, fc := range []int64{1} { // 2 × c × P must stay within Max
		for spent := int64(4); spent <= 10; spent++ {
			for n := int64(1); n <= 8; n++ {
				key := fmt.Sprintf("k%d-%d-%d", fc, spent, n)
				mk := func(pop string) *Limiter {
					l, err := New(Config{PoP: pop, Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 3, FreeCredit: fc}, rdb, clock)
					require.NoError(t, err)
					t.Cleanup(func() { _ = l.Close(ctx) })
					return l
				}
				a := mk("a")
				b := mk("b")
				if n%2 == 0 {
					for w := 0; w < 4; w++ {
						_, err := a.AllowN(ctx, "warm"+key, clock.Now(), 1)
						require.NoError(t, err)
						_, err = b.AllowN(ctx, "warm"+key, clock.Now(), 1)
						require.NoError(t, err)
						require.NoError(t, a.Sync(ctx))
						require.NoError(t, b.Sync(ctx))
						clock.Advance(testWindow * time.Millisecond)
					}
				}
				for i := int64(0); i < spent; i++ {
					_, err := a.AllowN(ctx, key, clock.Now(), 1)
					require.NoError(t, err)
				}
				require.NoError(t, a.Sync(ctx))
				pk, err := b.PeekN(ctx, key, clock.Now(), n)
				require.NoError(t, err)
				d, err := b.AllowN(ctx, key, clock.Now(), n)
				require.NoError(t, err)
				assert.Equal(t, d.Allowed, pk.Allowed, "fc %d spent %d n %d: peek %+v allow %+v", fc, spent, n, pk, d)
			}
		}
	}
}
