package engine

import (
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/sim/truth"
)

// ClassResult is one traffic class's share of a mode's row: its decisions
// judged on their own (the ground truth is per identity, so the class's
// figures are exact), and how many of them waited for a Redis round trip.
type ClassResult struct {
	Class            string  `json:"class"`
	Decisions        int64   `json:"decisions"`
	Allowed          int64   `json:"allowed"`
	FalseAllows      int64   `json:"false_allows"`
	FalseDenies      int64   `json:"false_denies"`
	DecisionErrorPct float64 `json:"decision_error_pct"`
	MaxOveradmission float64 `json:"max_overadmission"`
	P99Overadmission float64 `json:"p99_overadmission"`
	Felt                     // what the class's identities felt, against the reference
	Waited           int64   `json:"waited_round_trip"` // decisions that waited for a Redis reply
	// FalseDeniesBySource splits FalseDenies by what made each decision
	// (the budget modes: budget.Source's names, "redis" for a decision
	// Call's answer, "crash" for a request its PoP's crash left
	// unanswered); nil for modes that name no source, and absent from
	// JSON for those and for a class without false denies.
	FalseDeniesBySource map[string]int64 `json:"false_denies_by_source,omitempty"`
	// FalseAllowsBySource splits FalseAllows the same way (a crash
	// admits nothing it leaves unanswered, so "crash" never appears).
	FalseAllowsBySource map[string]int64 `json:"false_allows_by_source,omitempty"`
}

// FaultCost is what one fault of Env.Faults cost a mode: the decisions of
// requests made while it lasted and for one window after (when its effect
// on the counts can still decide), judged, and the units admitted that
// Redis never counted among those requests (-1: not measured: pure Redis
// measures them, as its calls fail open; the budget modes do not).
type FaultCost struct {
	Fault            string  `json:"fault"`
	Decisions        int64   `json:"decisions"`
	FalseAllows      int64   `json:"false_allows"`
	FalseDenies      int64   `json:"false_denies"`
	DecisionErrorPct float64 `json:"decision_error_pct"`
	LostHits         int64   `json:"lost_hits"`
}

// judges scores a run by class and by fault alongside the whole. A class
// is a set of identities, and the exact log is per identity, so the whole
// run's verdicts are the class's: judges tallies them by class, and the
// run's Dense judge gives each class's over-admission (classResults).
type judges struct {
	classes []truth.Tally
	waited  []int64
	faults  []faultJudge
	denyBy  []map[string]int64 // per class: false denies by source (outcome.source set)
	allowBy []map[string]int64 // per class: false allows by source (outcome.source set)
}

type faultJudge struct {
	name       string
	start, end time.Duration
	tally      truth.Tally
	lost       int64
}

func (e *Env) newJudges(o *outcome) *judges {
	j := &judges{classes: make([]truth.Tally, len(e.Trace.Classes)), waited: make([]int64, len(e.Trace.Classes))}
	if o.source != nil {
		j.denyBy = make([]map[string]int64, len(e.Trace.Classes))
		j.allowBy = make([]map[string]int64, len(e.Trace.Classes))
		for c := range j.denyBy {
			j.denyBy[c] = map[string]int64{}
			j.allowBy[c] = map[string]int64{}
		}
	}
	w, f := e.Limit.Window, e.Faults
	lost := int64(-1)
	if o.lostAt != nil {
		lost = 0
	}
	add := func(name string, start, end time.Duration) {
		j.faults = append(j.faults, faultJudge{name: name, start: start, end: end + w, lost: lost})
	}
	if f.RedisOutage.Dur > 0 {
		add("redis-outage "+f.RedisOutage.String(), f.RedisOutage.Start, f.RedisOutage.End())
	}
	if f.Partition.Dur > 0 {
		add(fmt.Sprintf("partition %d@%s", f.Partition.PoP, f.Partition.Span), f.Partition.Start, f.Partition.End())
	}
	if f.RedisLoss > 0 {
		add("redis-loss@"+f.RedisLoss.String(), f.RedisLoss, f.RedisLoss)
	}
	for _, c := range f.Crashes {
		add(fmt.Sprintf("crash %d@%s", c.PoP, c.At), c.At, c.At)
	}
	return j
}

// observe scores request i's decision by its class and the faults it fell
// under; shouldAllow is the exact log's verdict on it.
func (j *judges) observe(e *Env, o *outcome, i int, shouldAllow bool) {
	r := e.Trace.Requests[i]
	if c := j.class(e, r.ID); c >= 0 {
		j.classes[c].Count(o.allowed[i], shouldAllow, int64(r.N))
		if o.waited[i] {
			j.waited[c]++
		}
		if j.denyBy != nil && shouldAllow != o.allowed[i] {
			if shouldAllow {
				j.denyBy[c][o.source[i]]++
			} else {
				j.allowBy[c][o.source[i]]++
			}
		}
	}
	for k := range j.faults {
		if f := &j.faults[k]; r.At >= f.start && r.At < f.end {
			f.tally.Count(o.allowed[i], shouldAllow, int64(r.N))
			if o.lostAt != nil {
				f.lost += o.lostAt[i]
			}
		}
	}
}

// class is identity id's class, an index of Trace.Classes; -1 when the
// trace names none.
func (j *judges) class(e *Env, id int32) int {
	if len(j.classes) == 0 || int(id) >= len(e.Trace.ClassOf) {
		return -1
	}
	return int(e.Trace.ClassOf[id])
}

// classResults returns the classes that made decisions, in ClassNames
// order; whole is the run's judge, felt its comparison with the
// reference.
func (j *judges) classResults(e *Env, whole *truth.Dense, felt *truth.Felt) []ClassResult {
	var out []ClassResult
	group := func(id int32) int { return j.class(e, id) }
	felts := felt.ResultsBy(group, len(j.classes))
	for c, v := range whole.ResultsBy(group, j.classes) {
		if v.Decisions == 0 {
			continue
		}
		out = append(out, ClassResult{Class: e.Trace.Classes[c], Decisions: v.Decisions, Allowed: v.Allowed,
			FalseAllows: v.FalseAllows, FalseDenies: v.FalseDenies, DecisionErrorPct: v.ErrorPct(),
			MaxOveradmission: v.MaxOveradmission, P99Overadmission: v.P99Overadmission,
			Felt: feltOf(felts[c]), Waited: j.waited[c]})
		if j.denyBy != nil {
			out[len(out)-1].FalseDeniesBySource = j.denyBy[c]
			out[len(out)-1].FalseAllowsBySource = j.allowBy[c]
		}
	}
	return out
}

func (j *judges) faultCosts() []FaultCost {
	var out []FaultCost
	for _, f := range j.faults {
		out = append(out, FaultCost{Fault: f.name, Decisions: f.tally.Decisions, FalseAllows: f.tally.FalseAllows,
			FalseDenies: f.tally.FalseDenies, DecisionErrorPct: f.tally.ErrorPct(), LostHits: f.lost})
	}
	return out
}
