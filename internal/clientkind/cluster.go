package clientkind

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Cluster is the method set by which a client is told to be a Redis
// Cluster client, one that follows MOVED and ASK redirections itself and
// routes each key to its slot's master: *redis.ClusterClient has it, and
// so has any type embedding one (the methods are promoted); *redis.Client
// (a Sentinel failover client too) and *redis.Ring have neither method.
type Cluster interface {
	// ForEachMaster calls fn on each master of the cluster.
	ForEachMaster(ctx context.Context, fn func(ctx context.Context, client *redis.Client) error) error
	// ReloadState reloads the client's slot map in the background.
	ReloadState(ctx context.Context)
}

// AsCluster returns c as a Cluster and true when c has Cluster's methods,
// else nil and false (c nil included).
func AsCluster(c any) (Cluster, bool) {
	cc, ok := c.(Cluster)
	return cc, ok
}
