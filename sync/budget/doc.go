// Package budget is a local-first limiter for the sliding window counter in
// which every unit a PoP admits without asking Redis is covered by budget
// Redis has already accounted for (docs/budget.md has the argument and the
// figures). Limiter implements core.Limiter; Machine is its sans-IO core.
//
// How a request flows: Limiter.AllowN locks the Machine, tells it the
// PoP's clock (Machine.Clock) and calls Machine.Request, which hands it to
// Machine.decide, the one decision function. An identity seen only through
// free credit is a light record (light.go), one Redis named hot and seen
// nowhere else here a renounced record (renounce.go), any other a full
// entry, for which decide tries in order: the cached deny-until, the grant
// balance, this PoP's free credit (Config.FreeCredit units per identity
// and window), the fallback on the view while Redis is down, a local
// denial while Redis' last reply left no headroom (with Config.NoWait,
// also once Redis called the identity contested and what was admitted of
// it reaches 3/8 of the limit), and one of a flooding identity while a
// Call about it is in flight (flood.go). Otherwise Request returns a
// decision Call, carrying this PoP's numbered report of the identity when
// it has one (at most 32 outstanding); AllowN runs it outside the lock
// (Exec: lua/budget.lua), which applies the report, decides at Redis as
// of the request's send (now less the Call's age, this PoP's estimate of
// its one-way delay: age.go), counts the units and tops up the grant, and
// Machine.Complete applies the reply (a denial that what this PoP holds
// by then covers is admitted from it; at a lone PoP, one whose grant is
// still on its way in a Sync batch's reply waits for it: park.go).
// Machine.Describe tells the
// Decision in core's terms. PeekN (and Peek, of one unit) asks Redis
// with a Call that counts nothing (it carries this PoP's unreported
// spends of the identity, as a decision Call would); Reset forgets an identity at Redis and, once Redis applied it,
// in the view. Every SyncInterval the loop Limiter.Start began calls
// Limiter.Sync, which runs Machine.Tick's batches (spends, returns,
// free-slot claims, grant requests) and Machine.Finish applies their
// replies; with Limiter.UseNATS, Machine.Gossip names identities over
// their limit at Redis alone and other PoPs deny them without a round
// trip (Machine.Hear). Close runs a last Sync.
//
// The invariant and the stated bounds, each with its test on a real Redis:
//
//   - Budget: at every admission by any PoP, the sliding estimate of the
//     units all PoPs truly admitted satisfies core.SlidingAdmits, as pure
//     Redis requires. Redis keeps per identity and window C (admitted
//     units it knows of), G (granted, not yet reported) and K (free slots
//     claimed), and grants or decides only while what the PoPs can still
//     admit unasked stays within the limit now and at the starts of the
//     next two windows (TestPropertyBudget, over random interleavings).
//   - Counting: Sync batches, decision Calls carrying a report, and
//     Resets are numbered, each kind in a sequence of its own, and Redis
//     applies a number at most once (a guard per incarnation and group),
//     so a retried or resent report changes nothing (TestScriptRetriedBatch,
//     TestDecisionReportAppliedOnce, TestResetReplyLostAppliedOnce). A
//     caller that left (*CanceledError) is no outage and no decision: its
//     report goes again, what its request took goes back, and what Redis
//     may have counted of a Call it ran stays counted; a caller gone
//     before its call takes and sends nothing
//     (TestCanceledInFlightKeepsReports, TestCanceledBeforeCallCountsNothing).
//   - Gossip only denies: a count heard is a lower bound merged by
//     maximum, so duplicated, reordered or lost messages change nothing a
//     denial rests on (TestPropertyBudget judges every gossip denial).
//   - Crash loss: a crashed PoP's unreported admissions are inside G or
//     the free slots' reservation at Redis already, so nothing it admitted
//     is missing from the accounting; a restarted PoP spends no fresh free
//     credit in a window decided while its previous incarnation was
//     counted, unless those decisions reserved for one more spender
//     (lease.go, "the first count"; TestPropertyBudget allows the bound
//     from before that rule: c per restart per window, and c of another
//     PoP's slot a second claim may hide).
//   - Redis loss: if Redis loses its state, the PoPs together may admit up
//     to Max more in the loss's window and the two after it, and 2c·P of
//     leased free credit through the fourth window after it; then the
//     invariant holds again, as nothing a Machine keeps from the lost keys
//     outlasts the third window after the loss (TestPropertyRedisLosesState,
//     over random interleavings; TestLimiterAfterRedisRestartsEmpty).
//
// Every Redis key of a limit carries its Keyspace (Config.Namespace, Max
// and window) in its hash tag, so limits sharing a Namespace never share a
// key (TestTwoLimitsOneNamespace). Machine is not safe for concurrent use;
// Limiter is. Bad configuration is refused with an error wrapping
// ErrConfig.
package budget
