package budget

import (
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeadlineBound: a Limiter is DeadlineBound exactly when its go-redis
// client has ContextTimeoutEnabled (a plain client and a cluster client of
// each kind).
func TestDeadlineBound(t *testing.T) {
	_, p := redistest.Client(t)
	for _, c := range []struct {
		name  string
		rdb   redis.UniversalClient
		bound bool
	}{
		{"client", redis.NewClient(&redis.Options{Addr: p.Addr}), false},
		{"client, ContextTimeoutEnabled", redis.NewClient(&redis.Options{Addr: p.Addr, ContextTimeoutEnabled: true}), true},
		{"cluster client", redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{p.Addr}}), false},
		{"cluster client, ContextTimeoutEnabled", redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{p.Addr}, ContextTimeoutEnabled: true}), true},
	} {
		t.Cleanup(func() { c.rdb.Close() })
		l, err := New(Config{PoP: "p", Limit: core.PerWindow(10, time.Minute), PoPs: 1}, c.rdb, nil)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.bound, l.DeadlineBound(), c.name)
	}
}
