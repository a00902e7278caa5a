package engine

import "github.com/edgelimit/edgelimit/sim/truth"

// Felt is what a mode's decisions cost the identities, against the
// reference: the ideal limiter (one exact sliding log over every PoP,
// deciding each request at its own instant with no network) run on the
// same trace (Reference). Every mode gets it from its decisions alone.
type Felt struct {
	// QuotaServedPct is the units the mode admitted ÷ the reference's × 100.
	QuotaServedPct float64 `json:"quota_served_pct"`
	// UnderAdmissionPct is, over the contested identities (those whose
	// demand passed the limit in some window-long interval: the reference
	// denied them at least once), the share of the reference's admitted
	// units the mode did not admit, window by window (fixed windows of the
	// limit), × 100.
	UnderAdmissionPct float64 `json:"under_admission_pct"`
	// BeyondLimitUnits are the units admitted that took an identity's last
	// window past the limit.
	BeyondLimitUnits int64 `json:"beyond_limit_units"`
	// WronglyLimited counts the identities whose demand never passed the
	// limit in any window-long interval, yet were denied at least once;
	// WronglyLimitedUnits the units they were denied.
	WronglyLimited      int64 `json:"wrongly_limited"`
	WronglyLimitedUnits int64 `json:"wrongly_limited_units"`
	// RateErrorMeanPct and RateErrorP99Pct are the mean and p99 over the
	// contested identities of |admitted − reference| ÷ reference × 100.
	RateErrorMeanPct float64 `json:"rate_error_mean_pct"`
	RateErrorP99Pct  float64 `json:"rate_error_p99_pct"`
	// Contested counts the contested identities.
	Contested int64 `json:"contested"`
}

// feltOf is the report's Felt of truth's.
func feltOf(r truth.FeltResult) Felt {
	return Felt{QuotaServedPct: r.QuotaServedPct, UnderAdmissionPct: r.UnderAdmissionPct,
		BeyondLimitUnits: r.BeyondUnits, WronglyLimited: r.WronglyLimited,
		WronglyLimitedUnits: r.WronglyLimitedUnits, RateErrorMeanPct: r.RateErrorMeanPct,
		RateErrorP99Pct: r.RateErrorP99Pct, Contested: r.Contested}
}

// ReferenceMode names the reference's row.
const ReferenceMode = "reference"

// reference is the reference's decision on every request of the trace, in
// trace order: Dense.Admit at the request's true time.
func (e *Env) reference() []bool {
	if e.ref != nil {
		return e.ref
	}
	d := truth.NewDense(e.Limit.Max, e.Limit.Window, e.Trace.Config.Identities)
	e.ref = make([]bool, len(e.Trace.Requests))
	for i, r := range e.Trace.Requests {
		e.ref[i] = d.Admit(r.ID, e.At(i).UnixMilli(), int64(r.N))
	}
	return e.ref
}

// Reference is the reference's row for e's trace: the ideal limiter's
// decisions judged like a mode's (no false decision, over-admission at
// most 1, every quota served), with no round trip, message or latency. It
// needs no server.
func Reference(e *Env) Result {
	o := newOutcome(len(e.Trace.Requests))
	copy(o.allowed, e.reference())
	return e.score(ReferenceMode, o)
}
