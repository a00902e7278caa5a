package engine

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/sim/truth"
)

// TestScoreJudgesClassesAsSeparateJudges checks score, which judges the
// classes with the run's one Dense judge, against the computation before
// it: a truth.Judge for the whole run and one per class, each fed its
// class's decisions.
func TestScoreJudgesClassesAsSeparateJudges(t *testing.T) {
	e := testEnv(t, "mixed")
	o := newOutcome(len(e.Trace.Requests))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range o.allowed {
		o.allowed[i] = rng.IntN(4) > 0
		o.latency[i] = time.Duration(rng.IntN(2)) * time.Millisecond
	}
	got := e.score("test", o)

	whole := truth.New[int32](e.Limit.Max, e.Limit.Window)
	classes := make([]*truth.Judge[int32], len(e.Trace.Classes))
	waited := make([]int64, len(classes))
	for c := range classes {
		classes[c] = truth.New[int32](e.Limit.Max, e.Limit.Window)
	}
	for i, r := range e.Trace.Requests {
		at, c := e.At(i).UnixMilli(), e.Trace.ClassOf[r.ID]
		whole.Observe(r.ID, at, int64(r.N), o.allowed[i])
		classes[c].Observe(r.ID, at, int64(r.N), o.allowed[i])
		if o.latency[i] > 0 {
			waited[c]++
		}
	}
	w := whole.Result()
	if got.Decisions != w.Decisions || got.FalseAllows != w.FalseAllows || got.FalseDenies != w.FalseDenies ||
		got.MaxOveradmission != w.MaxOveradmission || got.P99Overadmission != w.P99Overadmission {
		t.Fatalf("whole run %+v, separate judge %+v", got, w)
	}
	var want []ClassResult
	for c, j := range classes {
		v := j.Result()
		if v.Decisions == 0 {
			continue
		}
		want = append(want, ClassResult{Class: e.Trace.Classes[c], Decisions: v.Decisions, Allowed: v.Allowed,
			FalseAllows: v.FalseAllows, FalseDenies: v.FalseDenies, DecisionErrorPct: v.ErrorPct(),
			MaxOveradmission: v.MaxOveradmission, P99Overadmission: v.P99Overadmission, Waited: waited[c]})
	}
	if len(got.Classes) != len(want) || len(want) < 2 {
		t.Fatalf("%d classes, separate judges %d (want at least 2)", len(got.Classes), len(want))
	}
	for c := range want {
		if got.Classes[c] != want[c] {
			t.Fatalf("class %d: %+v, separate judge %+v", c, got.Classes[c], want[c])
		}
	}
}
