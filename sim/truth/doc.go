// Package truth is the simulator's ground truth: it keeps the
// exact log of every unit any PoP admitted and judges each decision against
// it. A decision on identity k at time t for n units is right to allow when
// the log holds fewer than limit−n+1 units of k in (t−window, t], counted
// exactly over all PoPs; otherwise it is right to deny.
//
// It also measures over-admission: for each identity, the most units
// admitted in any window-long interval, divided by the limit.
//
// Dense.Admit is the reference: the same exact log deciding each request
// itself, at its own instant, with nothing between (the ideal limiter).
// Felt compares a limiter's decisions with the reference's on the same
// requests, identity by identity: quota served, under-admission of the
// identities whose demand passed the limit, units beyond the limit,
// identities wrongly limited, and the rate error.
package truth
