package engine

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/edgelimit/edgelimit/sim/truth"
)

// TestScoreJudgesClassesAsSeparateJudges checks score, which judges the
// classes with the run's one Dense judge and one Felt, against the
// computation before it: a truth.Judge for the whole run and one per
// class, each fed its class's decisions, and a truth.Felt per class.
func TestScoreJudgesClassesAsSeparateJudges(t *testing.T) {
	e := testEnv(t, "mixed")
	o := newOutcome(len(e.Trace.Requests))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range o.allowed {
		o.allowed[i] = rng.IntN(4) > 0
		o.latency[i] = time.Duration(rng.IntN(2)) * time.Millisecond
		o.waited[i] = rng.IntN(2) > 0 // a call may wait a round trip of 0 ms
	}
	got := e.score("test", o)

	ref := e.reference()
	whole := truth.New[int32](e.Limit.Max, e.Limit.Window)
	classes := make([]*truth.Judge[int32], len(e.Trace.Classes))
	beyond := make([]*truth.Dense, len(e.Trace.Classes))
	felts := make([]*truth.Felt, len(e.Trace.Classes))
	waited := make([]int64, len(classes))
	for c := range classes {
		classes[c] = truth.New[int32](e.Limit.Max, e.Limit.Window)
		beyond[c] = truth.NewDense(e.Limit.Max, e.Limit.Window, 0)
		felts[c] = truth.NewFelt(e.Limit.Window, 0)
	}
	for i, r := range e.Trace.Requests {
		at, c := e.At(i).UnixMilli(), e.Trace.ClassOf[r.ID]
		whole.Observe(r.ID, at, int64(r.N), o.allowed[i])
		classes[c].Observe(r.ID, at, int64(r.N), o.allowed[i])
		_, b := beyond[c].ObserveBeyond(r.ID, at, int64(r.N), o.allowed[i])
		felts[c].Observe(r.ID, at, int64(r.N), o.allowed[i], ref[i], b)
		if o.waited[i] {
			waited[c]++
		}
	}
	w := whole.Result()
	assert.Equal(t, w.Decisions, got.Decisions, "whole run's decisions against a separate judge")
	assert.Equal(t, w.FalseAllows, got.FalseAllows, "whole run's false allows against a separate judge")
	assert.Equal(t, w.FalseDenies, got.FalseDenies, "whole run's false denies against a separate judge")
	assert.Equal(t, w.MaxOveradmission, got.MaxOveradmission, "whole run's worst over-admission against a separate judge")
	assert.Equal(t, w.P99Overadmission, got.P99Overadmission, "whole run's p99 over-admission against a separate judge")
	var want []ClassResult
	for c, j := range classes {
		v := j.Result()
		if v.Decisions == 0 {
			continue
		}
		want = append(want, ClassResult{Class: e.Trace.Classes[c], Decisions: v.Decisions, Allowed: v.Allowed,
			FalseAllows: v.FalseAllows, FalseDenies: v.FalseDenies, DecisionErrorPct: v.ErrorPct(),
			MaxOveradmission: v.MaxOveradmission, P99Overadmission: v.P99Overadmission,
			Felt: feltOf(felts[c].Result()), Waited: waited[c]})
	}
	require.Len(t, got.Classes, len(want), "classes scored, against separate judges")
	require.GreaterOrEqual(t, len(want), 2, "mixed has at least 2 classes")
	for c := range want {
		assert.Equal(t, want[c], got.Classes[c], "class %d against its separate judge and Felt", c)
	}
}

// TestReferenceRow checks the reference's row: its decisions are the
// exact log's own (no false decision, never over the limit), it serves
// itself every unit, and a mode that decides as it does feels nothing.
func TestReferenceRow(t *testing.T) {
	for _, s := range []string{"mixed", "flash-crowd"} {
		e := testEnv(t, s)
		r := Reference(e)
		assert.Equal(t, ReferenceMode, r.Mode, "%s: the reference's row name", s)
		assert.EqualValues(t, len(e.Trace.Requests), r.Decisions, "%s: the reference decides every request", s)
		assert.Zero(t, r.FalseAllows+r.FalseDenies, "%s: the reference errs nowhere against its own log", s)
		assert.LessOrEqual(t, r.MaxOveradmission, 1.0, "%s: the reference never holds more than the limit", s)
		assert.Equal(t, 100.0, r.QuotaServedPct, "%s: the reference serves its own quota", s)
		assert.Zero(t, r.UnderAdmissionPct, "%s: nor under-admits", s)
		assert.Zero(t, r.BeyondLimitUnits, "%s: nor admits beyond the limit", s)
		assert.Zero(t, r.WronglyLimited, "%s: nor limits an identity under its limit", s)
		assert.Zero(t, r.RateErrorP99Pct, "%s: nor errs on any rate", s)
		assert.Positive(t, r.Contested, "%s: the trace has identities over their limit", s)
		assert.Positive(t, r.Denied, "%s: which the reference denies", s)
	}
}
