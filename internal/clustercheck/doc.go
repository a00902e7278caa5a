// Package clustercheck tells a go-redis client that follows a Redis
// Cluster's redirections from one that does not, for backends/redis and
// sync/budget: IsRedirect tells a node's MOVED or ASK reply from any other
// failure.
package clustercheck
