// Package reconcile is the hybrid limiter's Redis side: the key layout of
// the per-(identity, window) grow-only counters and the two Lua scripts that
// touch them — a batched, multi-key merge-and-read (Flush: one round trip per
// batch) and an atomic merge-and-decide for identities close to their limit
// (Decide: one round trip).
//
// Layout: one Redis hash per (namespace, identity, window index), with one
// field per PoP counter id holding that PoP's cumulative count in the
// window, written only by max-merge (so replays are harmless) and expiring
// two windows (plus WithExpirySlack's slack) after its last write
// (PEXPIRE). All keys of one identity share one hash tag, so the two keys a
// decision reads are in one Redis Cluster slot. On a ClusterClient, Flush
// and FlushEscrow send one script call per master serving the batch (a
// variant of the script with Redis 7's allow-cross-slot-keys flag, see
// crossslot.go; one per identity on a Redis before 7.0) in one pipeline,
// which go-redis splits into one round trip per node; Shard tells which
// master serves an identity, so a caller that batches identities by Shard
// pays exactly one round trip and one script per batch.
//
// Each call is also an Op (DecideOp, FlushOp, FlushEscrowOp) that a caller
// may send with others in one pipeline (Pipeline), run by Redis in order.
//
// Its scripts live in package lua (hybrid_reconcile.lua, hybrid_decide.lua,
// hybrid_escrow.lua).
package reconcile
