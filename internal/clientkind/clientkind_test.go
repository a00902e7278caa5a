package clientkind

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
)

// Wrappers of the user's kind: each embeds a client, so its methods are
// promoted.
type (
	tracedCluster struct{ *redis.ClusterClient }
	tracedClient  struct{ *redis.Client }
	tracedRing    struct{ *redis.Ring }
)

// clients returns one client of each kind, with ContextTimeoutEnabled
// set to bound, each wrapped too, by name. None connects: New* dials on
// first use, and these are never used.
func clients(t *testing.T, bound bool) map[string]redis.UniversalClient {
	addr := "127.0.0.1:1"
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addr}, ContextTimeoutEnabled: bound})
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: bound})
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": addr}, ContextTimeoutEnabled: bound})
	fo := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{addr}, ContextTimeoutEnabled: bound})
	t.Cleanup(func() { cc.Close(); c.Close(); ring.Close(); fo.Close() })
	return map[string]redis.UniversalClient{
		"cluster": cc, "wrapped cluster": tracedCluster{cc},
		"client": c, "wrapped client": tracedClient{c},
		"ring": ring, "wrapped ring": tracedRing{ring},
		"sentinel failover": fo,
	}
}

// TestAsCluster: a *redis.ClusterClient and a type embedding one are
// clusters; a plain client, a Sentinel failover client, a Ring, their
// wrappers and nil are not. Caught mutations: deciding by the concrete
// type (the wrapper refused), a method set a Ring or a Client also has
// (ForEachShard: the Ring taken for a cluster).
func TestAsCluster(t *testing.T) {
	for name, c := range clients(t, false) {
		_, ok := AsCluster(c)
		assert.Equal(t, name == "cluster" || name == "wrapped cluster", ok, name)
	}
	_, ok := AsCluster(nil)
	assert.False(t, ok, "nil")
}

// TestContextTimeout: every kind of client, and a type embedding one, is
// bound by the context exactly when its options set
// ContextTimeoutEnabled; nil and a value that is no client are not.
// Caught mutations: deciding by the concrete type (the wrappers false), a
// kind left out (the Ring's RingOptions), the option ignored.
func TestContextTimeout(t *testing.T) {
	for _, bound := range []bool{false, true} {
		for name, c := range clients(t, bound) {
			assert.Equal(t, bound, ContextTimeout(c), "%s, ContextTimeoutEnabled %v", name, bound)
		}
	}
	assert.False(t, ContextTimeout(nil), "nil")
	assert.False(t, ContextTimeout(struct{}{}), "no client")
}
