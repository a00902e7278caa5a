// Package clustercheck tells a go-redis client that follows a Redis
// Cluster's redirections from one that does not, for backends/redis and
// sync/budget: Check is their CheckClient, which judges a client by what
// it does rather than by its Go type (Slot finds keys of each master's
// slots for it), and IsRedirect tells a node's MOVED or ASK reply from any
// other failure.
package clustercheck
