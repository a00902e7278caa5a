package clientkind

import "github.com/redis/go-redis/v9"

// DeadlineBound reports whether every call of client c ends by its
// context's deadline: ContextTimeout(c), and for a Redis Cluster client (a
// type with the Options method of a *redis.ClusterClient) its
// DisableRoutingPolicies too. With routing policies on, go-redis' default,
// a cluster client looks its command table up (COMMAND) before a call
// until it has it cached, under a context of its own, 5 s long and
// detached from the caller's: a call on a cluster that stalls before the
// table is cached waits seconds past a deadline of milliseconds.
func DeadlineBound(c any) bool {
	if o, ok := c.(interface{ Options() *redis.ClusterOptions }); ok {
		return o.Options().ContextTimeoutEnabled && o.Options().DisableRoutingPolicies
	}
	return ContextTimeout(c)
}
