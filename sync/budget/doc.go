// Package budget is a local-first limiter for the sliding window counter in
// which every unit a PoP admits without asking Redis is covered by budget
// Redis has accounted for (docs/budget.md has the argument).
//
// Invariant (budget): at every admission by any PoP, the sliding estimate
// of the units all PoPs truly admitted stays within what pure Redis admits
// (core.SlidingAdmits held before it). Redis holds per identity and window
// C (admitted units it knows of), G (granted, not yet reported) and K (free
// slots claimed), and grants or decides only while the bound of what the
// PoPs can still admit unasked stays within the limit now, at the start of
// the next window and at the start of the one after.
//
// Counting: a Sync batch carries a sequence number per (incarnation, group)
// and Redis applies it at most once; a retried batch changes nothing.
//
// Crash loss: a crashed PoP's unreported admissions are inside G or R at
// Redis already; nothing it admitted is missing from the accounting.
package budget
