package clientkind

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
)

// TestDeadlineBound: a client is deadline-bound exactly when it is
// ContextTimeout, except a cluster client (or a type embedding one), which
// also needs DisableRoutingPolicies. Caught mutations: the cluster's
// routing policies ignored, the wrapper decided by concrete type.
func TestDeadlineBound(t *testing.T) {
	for _, bound := range []bool{false, true} {
		for name, c := range clients(t, bound) {
			_, cluster := AsCluster(c)
			assert.Equal(t, bound && !cluster, DeadlineBound(c), "%s, ContextTimeoutEnabled %v", name, bound)
		}
	}
	for _, disable := range []bool{false, true} {
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, ContextTimeoutEnabled: true, DisableRoutingPolicies: disable})
		assert.Equal(t, disable, DeadlineBound(cc), "cluster, DisableRoutingPolicies %v", disable)
		assert.Equal(t, disable, DeadlineBound(tracedCluster{cc}), "wrapped cluster, DisableRoutingPolicies %v", disable)
		cc.Close()
	}
	assert.False(t, DeadlineBound(nil), "nil")
}
