// Package budget is a local-first limiter for the sliding window counter in
// which every unit a PoP admits without asking Redis is covered by budget
// Redis has already accounted for (docs/budget.md has the argument and the
// figures).
//
// How a request flows: Limiter.AllowN locks the Machine, tells it the
// PoP's clock (Machine.Clock: the anchor of the waits of a request stamped
// ahead of it) and calls
// Machine.Request, which hands it to Machine.decide, the one decision
// function. An identity seen only through free credit is a light record
// (light.go), admitted from this PoP's free credit (freeLight); one Redis
// named hot and seen nowhere else here is a renounced record of its slots
// given up (renounce.go), and no state dropped with a window lets a late
// request spend a slot twice (forget.go); any other is a full entry,
// promoted from its record when it needs more, for which
// decide tries in
// order the cached deny-until (from Redis' count C alone, via
// core.SlidingRetryMillis), the identity's grant balance, this PoP's free
// credit (Config.FreeCredit units per identity and window), the fallback
// on the view while Redis is down, and a local denial while Redis' last
// reply left the identity no headroom (or, with Config.NoWait, once Redis
// has called it contested and what was admitted of it reaches 3/8 of the
// limit), and a local denial of a flooding identity (contested, its
// demand at twice its limit or more) while a decision Call about it is in
// flight from this PoP (flood.go). Otherwise Request returns a
// decision Call: the free slot and the grant balance pay what they can of
// the request and Redis is asked for the rest; the Call also carries this
// PoP's report of the identity (its unreported spends and, for an
// identity new here or contested, its free slots of the next two windows
// given up), numbered so that Redis applies it once. AllowN
// runs it outside the lock (Exec: lua/budget.lua, EVALSHA then EVAL on
// NOSCRIPT), which applies the report, decides at Redis (as of the
// request's send by this PoP's estimate of the one-way delay, the Call's
// age: age.go), counts the units into C and tops up the grant, and
// Machine.Complete applies the reply (a denial that what this PoP holds
// by then covers is admitted from it).
// Machine.Describe then tells the Decision in core's terms (Remaining,
// RetryAfter, ResetAfter). Limiter implements core.Limiter: Peek asks
// Redis with a Call that writes nothing (Machine.Peek, PeekDone), Reset
// forgets Redis' counts of an identity and, once Redis applied it, this
// PoP's view of it (Machine.Reset, ResetDone).
// Every SyncInterval the loop started by Limiter.Start calls Limiter.Sync:
// Machine.Tick plans one batch per group of identities (spends, returns,
// free-slot claims, grant requests), Exec runs each, Machine.Finish
// applies the replies (grants, deny-until, hot identities); then, with
// Limiter.UseNATS, Machine.Gossip's message names the identities whose
// count at Redis alone is over their limit, and the other PoPs' Limiters
// hand it to Machine.Hear, which denies them there without a round trip
// (gossip.go). Close runs a last Sync.
//
// Invariant (budget): at every admission by any PoP, the sliding estimate
// of the units all PoPs truly admitted satisfies core.SlidingAdmits as
// pure Redis requires. Redis keeps per identity and window C (admitted
// units it knows of), G (granted, not yet reported) and K (free slots
// claimed), and grants or decides only while the bound of what the PoPs
// can still admit unasked stays within the limit now, at the start of the
// next window and at the start of the one after. TestPropertyBudget checks
// it on a real Redis over random interleavings.
//
// Counting: a Sync batch carries a sequence number per (incarnation,
// group); Redis applies it at most once, so a retried batch changes
// nothing (TestScriptRetriedBatch). A decision Call carrying a report has
// a number of a second sequence, up to 32 such Calls outstanding, and
// the report of one whose reply never came is sent again under its number
// (TestDecisionReportAppliedOnce); a Reset has a third, under which the
// unreported spends of a Reset whose reply never came are sent again
// (TestResetReplyLostAppliedOnce). A call whose
// caller's context was cancelled (a *CanceledError) is no outage and no
// decision: a decision Call's report goes again under its number, what
// its request took goes back, and what Redis may have counted of a Call
// it ran stays counted (Machine.Complete); a caller gone before its call
// takes and sends nothing (TestCanceledBeforeCallCountsNothing,
// TestCanceledInFlightKeepsReports).
//
// Gossip only denies: a count heard is a lower bound of what was
// admitted, merged with this PoP's own by maximum, so a duplicated,
// reordered or lost message changes nothing a denial rests on;
// TestPropertyBudget judges every denial gossip made against what Redis
// can have counted.
//
// Crash loss: a crashed PoP's unreported admissions are inside G or R at
// Redis already; nothing it admitted is missing from the accounting. A
// restarted PoP spends no fresh free credit in a window Redis decided
// while its previous incarnation was counted, unless those decisions
// reserved for one more spender (lease.go, "the first count"); the stated
// bound before that rule, c per restart per window and c of another PoP's
// slot its second claim may hide, is what TestPropertyBudget allows.
//
// Redis loss: when Redis loses its state (a restart without persistence,
// a failover that lost the last writes), what it forgot was within the
// limit: the PoPs together may admit up to Max more in the loss's window
// and the two after it, and 2c·P of free credit leased before the loss
// through the fourth after it; then the invariant holds again, as nothing
// a Machine keeps from the lost keys outlasts the third window after the
// loss (TestPropertyRedisLosesState, TestLimiterAfterRedisRestartsEmpty).
//
// Keys: every Redis key of a limit carries its Keyspace (Config.Namespace,
// Max and window) in its hash tag, so limits sharing a Namespace never
// share a key, and every PoP of one limit shares all of them
// (TestTwoLimitsOneNamespace).
//
// Machine is sans-IO and not safe for concurrent use; Limiter is. Bad
// configuration is refused with an error wrapping ErrConfig.
package budget
