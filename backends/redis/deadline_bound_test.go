package redis

import (
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeadlineBound: a Limiter is DeadlineBound when its go-redis client
// has ContextTimeoutEnabled (a cluster client DisableRoutingPolicies too:
// see TestDeadlineBoundClusterStalled) or it pipelines
// (WithPipelining: its callers return when their context ends), and not
// on a plain client without it, whose call on a Redis that does not
// answer waits for ReadTimeout. No call is made. Mutations caught: the
// method missing (the middleware then abandons every decision at its
// deadline), a constant answer either way.
func TestDeadlineBound(t *testing.T) {
	limit := core.PerWindow(10, time.Second)
	for _, tc := range []struct {
		name   string
		client goredis.UniversalClient
		opts   []Option
		want   bool
	}{
		{"plain client", goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"}), nil, false},
		{"ContextTimeoutEnabled", goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true}), nil, true},
		{"cluster, ContextTimeoutEnabled", goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, ContextTimeoutEnabled: true}), nil, false},
		{"cluster, ContextTimeoutEnabled, DisableRoutingPolicies", goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, ContextTimeoutEnabled: true, DisableRoutingPolicies: true}), nil, true},
		{"cluster plain, pipelining", goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}}), []Option{WithPipelining(time.Millisecond, 16)}, true},
		{"cluster plain", goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}}), nil, false},
		{"plain client, pipelining", goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"}), []Option{WithPipelining(time.Millisecond, 16)}, true},
	} {
		l, err := New(tc.client, limit, tc.opts...)
		require.NoError(t, err, tc.name)
		var b interface{ DeadlineBound() bool } = l
		assert.Equal(t, tc.want, b.DeadlineBound(), tc.name)
		require.NoError(t, tc.client.Close())
	}
}
