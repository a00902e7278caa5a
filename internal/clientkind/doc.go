// Package clientkind tells go-redis clients apart by their method sets
// rather than their concrete types, so that a user's type embedding a
// client (instrumentation, a circuit breaker: struct{ *redis.ClusterClient })
// is taken for the client it wraps, as its promoted methods make it: a
// Redis Cluster client (Cluster, AsCluster) and one whose calls end by
// their context's deadline (ContextTimeout). Used by backends/redis,
// sync/budget and internal/topology.
package clientkind
