// Package gossip is the wire format and the NATS transport of the
// limiters' gossip: per-window counts of identities, which every PoP
// merges into its view by maximum. The hybrid's PoPs publish their own
// cumulative counts of what they admitted (see package hybrid); the
// budget limiter's publish Redis' counts of identities over their limit,
// on a subject of their own (see package budget).
//
// The format is versioned and compact (varints, one header per batch, many
// identities per message). Decode is defensive: truncated, oversized,
// unknown-version or otherwise malformed input returns an error matching
// core.ErrMalformed and nothing of it is applied. Identities travel only in
// payloads, never in subject names: the subject is the namespace plus a fixed
// suffix (see Subject).
package gossip
