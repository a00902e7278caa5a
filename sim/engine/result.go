package engine

import (
	"slices"
	"time"

	"github.com/edgelimit/edgelimit/sim/truth"
)

// Result is one mode's row of the report; the JSON names are the report's
// contract.
type Result struct {
	Mode             string  `json:"mode"`
	Decisions        int64   `json:"decisions"`
	Allowed          int64   `json:"allowed"`
	Denied           int64   `json:"denied"`
	FalseAllows      int64   `json:"false_allows"`
	FalseDenies      int64   `json:"false_denies"`
	DecisionErrorPct float64 `json:"decision_error_pct"`
	MaxOveradmission float64 `json:"max_overadmission"`
	P99Overadmission float64 `json:"p99_overadmission"`
	// Felt is what the decisions cost the identities against the
	// reference (its fields inline in JSON).
	Felt
	RedisRoundTrips       int64   `json:"redis_round_trips"`
	RoundTripsPerDecision float64 `json:"round_trips_per_decision"`
	// RoundTripsSavedPct is against pure Redis' one round trip per
	// decision; it does not apply to the reference (SavesRoundTrips),
	// whose JSON gives null.
	RoundTripsSavedPct float64 `json:"round_trips_saved_pct"`
	NATSMessages       int64   `json:"nats_messages"`
	NATSBytes          int64   `json:"nats_bytes"`
	AddedLatencyP50Ms  float64 `json:"added_latency_p50_ms"`
	AddedLatencyP99Ms  float64 `json:"added_latency_p99_ms"`
	WallSeconds        float64 `json:"wall_seconds"`
	// PeakRSSMB is the simulator process's peak resident memory while the
	// mode ran (MiB; the trace and the ground truth included), set by the
	// command where the OS tells it (Linux); 0 when unknown.
	PeakRSSMB float64 `json:"peak_rss_mb"`
	// RedisLoad is the work the mode gave Redis, read from the server's
	// INFO by the command (on a Redis Cluster summed over its masters); nil
	// when INFO failed.
	RedisLoad *RedisLoad `json:"redis_load,omitempty"`
	// Memory is what the mode's state cost per identity: the budget PoPs'
	// views (set here) and its keys at Redis (set by the command, which
	// reads the server); nil when nothing was measured (local).
	Memory *Memory `json:"memory,omitempty"`
	// LostHits are units admitted that Redis never counted, measured after
	// the run (redis: admitted by failing open); -1 when not measured
	// (local, budget: its free units sit in Redis' reservation, not its
	// count, by design; the ideal network).
	LostHits int64 `json:"lost_hits"`
	// Budget is the budget mode's Machine work (Stats summed over its
	// PoPs); nil for every other mode.
	Budget  *BudgetStats  `json:"budget,omitempty"`
	Classes []ClassResult `json:"classes,omitempty"`
	Faults  []FaultCost   `json:"faults,omitempty"`
	// Worst lists the Env.Worst identities with the highest peaks, worst
	// first; nil when Env.Worst is 0.
	Worst []WorstIdentity `json:"worst,omitempty"`
}

// RedisLoad is what one mode cost the Redis server while it ran: its
// script calls (EVALSHA and EVAL), the time Redis spent in them (Lua and
// the commands they call: INFO commandstats) and the server's CPU
// (used_cpu_user + used_cpu_sys, every command and the network included).
type RedisLoad struct {
	ScriptCalls   int64   `json:"script_calls"`
	ScriptSeconds float64 `json:"script_seconds"`
	CPUSeconds    float64 `json:"cpu_seconds"`
}

// outcome is what a mode hands back: per request (in trace order) whether
// it was allowed, the latency the mode added to it and whether it waited
// for a Redis round trip, plus the mode's traffic to Redis and NATS.
type outcome struct {
	allowed []bool
	source  []string // budget modes: what made each decision, budget.Source's name or "crash" (nil: not recorded)
	latency []time.Duration
	// waited says the request's decision went to Redis and waited for
	// the reply (or for the refusal, the timeout or the crash that ended
	// the wait): a round trip whatever its modelled latency, which is 0
	// for a PoP at -rtt-min 0.
	waited     []bool
	roundTrips int64
	natsMsgs   int64
	natsBytes  int64
	lost       int64        // units admitted that Redis never counted (-1: not measured)
	lostAt     []int64      // per request, its units in lost (nil: not measured)
	view       *ViewMemory  // budget: the heap the live PoPs' Machines held at the end (releaseMachines)
	budget     *BudgetStats // budget: its Machines' Stats summed
}

func newOutcome(n int) *outcome {
	return &outcome{allowed: make([]bool, n), latency: make([]time.Duration, n), waited: make([]bool, n), lost: -1}
}

// score judges o against the exact admitted log and fills a Result.
// Pure-Redis mode makes one round trip per decision, so round trips saved
// are measured against the number of decisions.
func (e *Env) score(mode string, o *outcome) Result {
	j := truth.NewDense(e.Limit.Max, e.Limit.Window, e.Trace.Config.Identities)
	felt := truth.NewFelt(e.Limit.Window, e.Trace.Config.Identities)
	ref := e.reference()
	by := e.newJudges(o)
	for i, r := range e.Trace.Requests {
		t, n := e.At(i).UnixMilli(), int64(r.N)
		should, beyond := j.ObserveBeyond(r.ID, t, n, o.allowed[i])
		felt.Observe(r.ID, t, n, o.allowed[i], ref[i], beyond)
		by.observe(e, o, i, should)
	}
	v := j.Result()
	p50, p99 := latencyPercentiles(o.latency)
	r := Result{Mode: mode, Decisions: v.Decisions, Allowed: v.Allowed, Denied: v.Denied,
		FalseAllows: v.FalseAllows, FalseDenies: v.FalseDenies, DecisionErrorPct: v.ErrorPct(),
		MaxOveradmission: v.MaxOveradmission, P99Overadmission: v.P99Overadmission,
		Felt: feltOf(felt.Result()), RedisRoundTrips: o.roundTrips, NATSMessages: o.natsMsgs, NATSBytes: o.natsBytes,
		AddedLatencyP50Ms: p50, AddedLatencyP99Ms: p99, LostHits: o.lost,
		Classes: by.classResults(e, j, felt), Faults: by.faultCosts(), Budget: o.budget,
		Worst: e.worst(o, ref, e.Worst)}
	if o.view != nil {
		r.Memory = NewMemory()
		r.Memory.View = o.view
	}
	if v.Decisions > 0 {
		r.RoundTripsPerDecision = float64(o.roundTrips) / float64(v.Decisions)
		r.RoundTripsSavedPct = 100 * (1 - r.RoundTripsPerDecision)
	}
	return r
}

// latencyPercentiles returns the p50 and p99 (nearest rank) in ms.
func latencyPercentiles(ls []time.Duration) (p50, p99 float64) {
	ms := make([]float64, len(ls))
	for i, l := range ls {
		ms[i] = float64(l) / float64(time.Millisecond)
	}
	slices.Sort(ms)
	return truth.Percentile(ms, 50), truth.Percentile(ms, 99)
}
