package hybrid

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/reconcile"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExpirySlackDefaultsToCallTimeout: a zero ExpirySlack becomes the
// client's ReadTimeout, DefaultCallTimeout for a client without one; an
// explicit one is kept.
func TestExpirySlackDefaultsToCallTimeout(t *testing.T) {
	e := newEnv(t, false)
	assert.Equal(t, time.Second, e.node("a", nil).cfg.ExpirySlack, "slack from the env client's ReadTimeout (1 s)")
	assert.Equal(t, time.Hour, e.node("b", func(c *Config) { c.ExpirySlack = time.Hour }).cfg.ExpirySlack,
		"an explicit ExpirySlack is kept")
	none := goredis.NewClient(&goredis.Options{Addr: e.proc.Addr, ReadTimeout: -1})
	t.Cleanup(func() { none.Close() })
	assert.Equal(t, DefaultCallTimeout, e.node("c", func(c *Config) { c.Redis = none }).cfg.ExpirySlack,
		"a client without read timeout gives DefaultCallTimeout")
	def := goredis.NewClient(&goredis.Options{Addr: e.proc.Addr})
	t.Cleanup(func() { def.Close() })
	assert.Equal(t, 5*time.Second, e.node("d", func(c *Config) { c.Redis = def }).cfg.ExpirySlack,
		"go-redis' default ReadTimeout (5 s)")
}

// TestLateSyncFindsWindow: PoP b counts a unit at the start of window i
// and Syncs it; PoP a's Sync, stamped at the end of window i+1 (window i
// still weighs then), reaches Redis later than two windows after b's
// write, within the client's call timeout (20 s). With the default slack
// (that timeout) the hash of window i is still there: a's reply brings b's
// unit. With no slack it had expired and a counted b's unit as never
// made. Windows of 100 ms; the PoPs' time is injected, and the test waits
// on Redis' own clock (TIME) for the two windows of wall time to pass.
func TestLateSyncFindsWindow(t *testing.T) {
	e := newEnv(t, false)
	rdb := goredis.NewClient(&goredis.Options{Addr: e.proc.Addr, ReadTimeout: 20 * time.Second, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	lim := core.PerWindow(100, 100*time.Millisecond)
	clk := core.NewManualClock(t0)
	mk := func(pop string) *Node {
		n, err := New(Config{PoP: pop, Limit: lim, Redis: rdb, Clock: clk, Resync: -1})
		require.NoError(t, err, "New %s", pop)
		t.Cleanup(func() { n.Close(context.Background()) })
		return n
	}
	a, b := mk("a"), mk("b")
	start := t0.Truncate(lim.Window) // the start of window i
	i, _ := b.position(core.Millis(start))
	mustAllow(t, b, "k", start)
	mustSync(t, b, start)
	written, err := rdb.Time(context.Background()).Result() // no earlier than b's write
	require.NoError(t, err, "TIME after b's Sync")
	require.Equal(t, int64(1), e.redisTotal(DefaultNamespace, "k", i), "b's unit in window i at Redis")

	require.Eventually(t, func() bool {
		now, err := rdb.Time(context.Background()).Result()
		return err == nil && now.Sub(written) > 2*lim.Window
	}, time.Minute, 5*time.Millisecond, "Redis' clock to pass two windows after b's write")

	late := start.Add(2*lim.Window - time.Millisecond) // end of window i+1
	mustAllow(t, a, "k", late)
	mustSync(t, a, late)
	ent, ok := a.lookup("k")
	require.True(t, ok, "a's view of k")
	ent.mu.Lock()
	cur, prev := ent.totals()
	ent.mu.Unlock()
	assert.Equal(t, int64(1), prev, "a's view of window i after its late Sync: b's unit (from Redis)")
	assert.Equal(t, int64(1), cur, "a's view of window i+1: its own unit")
	n, err := rdb.Exists(context.Background(), reconcile.Key(DefaultNamespace, "k", i)).Result()
	require.NoError(t, err, "EXISTS")
	assert.Equal(t, int64(1), n, "window i's hash still at Redis after the late Sync")
}
