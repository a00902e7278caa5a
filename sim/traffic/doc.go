// Package traffic generates the simulator's request traces: deterministic
// scenarios built from a seed, so every mode of pop-sim (and the separate
// bench module) replays exactly the same requests.
//
// A trace lasts Windows windows of the limit and mixes the shapes that break
// local counting: identities spread over all PoPs at several times their
// limit, bursts at window boundaries, and a calm majority far below the
// limit pinned to a home PoP.
package traffic
