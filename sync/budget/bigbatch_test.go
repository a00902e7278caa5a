package budget

import (
	"context"
	"fmt"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/require"
)

// TestSyncOfThousandsInOneBucket: a Sync batch carrying 9,000 identities of
// one bucket (Buckets 1), each reporting its free unit, is applied at Redis
// in one script call. Lua's unpack stops near 8,000 values, so a script
// that handed the bucket's 9,000 fields to one HMGET (or 18,000 field-value
// pairs to one HSET, or thousands of hot identities to one ZREM) failed
// the batch at every Sync; the script now sends them 1,000 at a time.
func TestSyncOfThousandsInOneBucket(t *testing.T) {
	rdb, _ := redistest.Client(t)
	m := newTestMachine(t, func(c *Config) { c.Buckets, c.PoPs = 1, 1 })
	now := int64(w0 + 5)
	x := m.window(now)
	const ids = 9000
	for i := range ids {
		e := m.entry(fmt.Sprint("id", i))
		e.claimed, e.usedFree = x, x
		e.addOp(Op{X: x, GW: GWFree, U: 1})
		e.renounce = true // as when Redis names it hot: the Sync reports and claims its slots
		m.mark(e)
	}
	calls := m.Tick(now)
	require.Len(t, calls, 1, "one group, one batch")
	require.Len(t, calls[0].Items, ids, "the batch carries every identity")
	res, errs := ExecAll(context.Background(), rdb, m, calls, now)
	require.NoError(t, errs[0], "the batch applies at Redis")
	m.Finish(calls[0], res[0], errs[0])
	require.Len(t, res[0].Items, ids)
	for i, it := range res[0].Items {
		require.Equal(t, int64(1), it.CW, "identity %d: its free unit counted in C", i)
	}
}
