// Package engine runs one trace through one mode of the simulator and
// scores it against the ground truth (package truth).
//
// Every mode drives the library's own limiters with explicit simulated
// times: "local" gives each PoP its own backends/local limiter, "redis"
// sends every decision to backends/redis, and "hybrid" (and
// "hybrid-nogossip") runs one sync/hybrid Node per PoP in a discrete-event
// loop of virtual time: request arrivals, each PoP's sync ticks, and gossip
// deliveries at send time plus the modelled PoP-to-PoP delay. Redis round
// trips are counted by a go-redis hook; each one a decision waits for is
// charged its PoP's modelled round-trip time as added latency.
//
// With Env.Skew each PoP's limiter reads its own clock (true time plus the
// PoP's offset) everywhere a time is handed to it, while the ground truth
// judges on true time. "redis-servertime" is pure Redis with the clock at
// Redis: every script gets the request's true time (the virtual-time model
// of backends/redis' WithServerTime, whose TIME is the real wall clock).
//
// Env.RedisAddr may list several Redis Cluster nodes (comma-separated), or
// Env.RedisCluster may say a single address is one: every client is then a
// cluster client, with round trips counted on each node's own client, so a
// pipeline counts one round trip per node it touches.
//
// Redis expires keys by the wall clock, not the virtual one: every key a
// run writes carries an expiry slack of the trace's simulated length plus
// an hour, so no key expires while the run still needs it, however short
// the window (see Env.expirySlack).
//
// The model's approximations: a Redis call is executed and its reply
// applied at the simulated instant it is made (its round-trip time is
// charged as latency but does not delay the state change), and Redis sees
// the calls of different PoPs in the order of their request times.
package engine
