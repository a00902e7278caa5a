package budget

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLimiterRejectsBadInput: an empty key, a zero or negative weight, a
// weight above the limit and a time before the Unix epoch each return an
// error matching core.ErrInvalid,
// and nothing is counted, planned or sent: the view stays empty, the next
// Sync has nothing to send, and Redis holds no key.
func TestLimiterRejectsBadInput(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	l, err := New(Config{PoP: "x", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2}, rdb, clock)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close(ctx) })
	require.NoError(t, l.Sync(ctx), "the free-credit lease is taken")
	leased, err := rdb.Keys(ctx, "*").Result()
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		key  string
		n    int64
	}{
		{"empty key", "", 1},
		{"zero weight", "k", 0},
		{"negative weight", "k", -1},
		{"weight above the limit", "k", 11},
	} {
		_, err := l.AllowN(ctx, c.key, clock.Now(), c.n)
		assert.ErrorIs(t, err, core.ErrInvalid, "%s: want an error matching core.ErrInvalid", c.name)
	}
	_, err = l.AllowN(ctx, "k", time.Time{}, 1)
	assert.ErrorIs(t, err, core.ErrBadTime, "AllowN at the zero time")
	_, err = l.Peek(ctx, "k", time.Unix(-1, 0))
	assert.ErrorIs(t, err, core.ErrBadTime, "Peek before the epoch")
	for _, key := range []string{"", strings.Repeat("x", core.MaxKeyLen+1)} {
		_, err := l.Peek(ctx, key, clock.Now())
		assert.ErrorIs(t, err, core.ErrInvalid, "Peek of a key of %d bytes: want an error matching core.ErrInvalid", len(key))
		err = l.Reset(ctx, key)
		assert.ErrorIs(t, err, core.ErrInvalid, "Reset of a key of %d bytes: want an error matching core.ErrInvalid", len(key))
	}
	assert.Zero(t, l.m.Len(), "bad input must create no view entry")
	require.NoError(t, l.Sync(ctx))
	keys, err := rdb.Keys(ctx, "*").Result()
	require.NoError(t, err)
	assert.ElementsMatch(t, leased, keys, "bad input must write nothing to Redis (only the lease's keys are there)")
}
