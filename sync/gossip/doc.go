// Package gossip is the wire format and the NATS transport of the hybrid
// limiter's gossip: each PoP publishes, in batches, its own cumulative
// per-window counts of the identities it admitted, and every PoP merges what
// it receives into its view by maximum (see package hybrid).
//
// The format is versioned and compact (varints, one header per batch, many
// identities per message). Decode is defensive: truncated, oversized,
// unknown-version or otherwise malformed input returns an error matching
// core.ErrMalformed and nothing of it is applied. Identities travel only in
// payloads, never in subject names: the subject is the namespace plus a fixed
// suffix (see Subject).
package gossip
