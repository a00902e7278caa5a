package clientkind

import "github.com/redis/go-redis/v9"

// ContextTimeout reports whether client c bounds its socket reads and
// writes by the context's deadline: the ContextTimeoutEnabled of its
// Options() for a *redis.Client, a *redis.ClusterClient, a *redis.Ring or
// any type with one of their Options methods (a type embedding one of
// them); false for any other client, and for nil.
func ContextTimeout(c any) bool {
	switch o := c.(type) {
	case interface{ Options() *redis.Options }:
		return o.Options().ContextTimeoutEnabled
	case interface{ Options() *redis.ClusterOptions }:
		return o.Options().ContextTimeoutEnabled
	case interface{ Options() *redis.RingOptions }:
		return o.Options().ContextTimeoutEnabled
	}
	return false
}
