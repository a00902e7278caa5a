// Package engine runs one trace through one mode of the simulator and
// scores it against the ground truth (package truth).
//
// Every mode drives the library's own limiters with explicit simulated
// times: "local" gives each PoP its own backends/local limiter, "redis"
// sends every decision to backends/redis, and "budget" (and the
// experimental "budget-nowait" and "budget-gossip") runs one sync/budget
// Machine per PoP in a discrete-event loop of virtual time (budget.go).
//
// On the honest network (Env.Network "honest", the default; budget.go,
// redis_honest.go) every Redis call, reply and gossip message is an event
// delivered one drawn one-way delay after it is sent (sim/netmodel.Links:
// the link's base delay plus seeded exponential jitter, so messages
// reorder). The budget limiter is driven through its sans-IO Machine
// (Request and Complete, Tick and Finish, Gossip and Hear), the simulator
// swapping only the network, the clock and Redis' arrival order: a call
// is executed on the real Redis at its arrival, in arrival order across
// PoPs, and its reply applied when it arrives; a Redis-decided request is
// answered then, its latency the whole trip. budget-gossip's messages go
// through the real NATS and are delivered at their drawn arrival. Pure
// Redis runs each identity's calls in arrival order. Env.Faults (outage,
// partition, crash, gossip loss and duplication) apply there only,
// deterministically for a seed; pure Redis' units admitted by failing
// open are counted (Result.LostHits, and per fault in its FaultCost).
// Results are also broken down by traffic class and by fault.
//
// On the ideal network ("ideal"; redis.go, local.go) a Redis call is
// executed and its reply applied at the simulated instant it is made (its
// round-trip time is only charged as latency), Redis sees the calls of
// different PoPs in the order of their request times: the model before
// the honest one, kept so its cost can be seen (the budget modes run on
// the honest network only). Pure Redis is counted one round trip per
// decision on either network (what a deployment pays without the
// simulator's pipelines); the budget modes' round trips are their
// Machines' own counts (budget.Stats: one per decision Call, one per
// Sync's pipeline, whatever masters of a Redis Cluster it touches;
// refused and lost calls included).
//
// With Env.Skew each PoP's limiter reads its own clock (true time plus the
// PoP's offset) everywhere a time is handed to it, while the ground truth
// judges on true time; no offset may pass MaxSkew, which would put a clock
// before the Unix epoch. "redis-servertime" is pure Redis with the clock at
// Redis: every script gets the request's true time (the virtual-time model
// of backends/redis' WithServerTime, whose TIME is the real wall clock).
//
// Env.RedisAddr may list several Redis Cluster nodes (comma-separated), or
// Env.RedisCluster may say a single address is one: every client is then a
// cluster client, and the budget Machines get the 16 groups budget.New
// gives a Limiter on one, their hash tags spread over the masters.
//
// Redis expires keys by the wall clock, not the virtual one: every key a
// run writes carries an expiry slack of the trace's simulated length plus
// an hour, so no key expires while the run still needs it, however short
// the window (see Env.expirySlack).
//
// Every run is also compared with the reference (Reference: the exact
// sliding log deciding each request at its true instant, no network, no
// Redis): each Result and ClassResult carries Felt, what its decisions
// cost the identities against it, computed from the decisions alone, so a
// new mode gets it without code of its own.
//
// What both models still approximate is listed in docs/tradeoffs.md §4
// ("What the simulator models, and what it still approximates").
package engine
