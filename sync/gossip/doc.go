// Package gossip is the wire format and the NATS transport of the budget
// limiter's gossip (see package budget): per-window counts of identities
// (Redis' counts of those over their limit), which every PoP merges into
// its view by maximum.
//
// The format is versioned and compact (varints, one header per batch, many
// identities per message). Decode is defensive: truncated, oversized,
// unknown-version or otherwise malformed input returns an error matching
// core.ErrMalformed and nothing of it is applied. Identities travel only in
// payloads, never in subject names: the subject is the namespace plus a fixed
// suffix (see Subject).
package gossip
