package engine

import (
	"cmp"
	"slices"
)

// WorstIdentity is one of a run's most over-admitted identities: its peak
// (the most units it had admitted within any window-long span: the exact
// log's measure of over-admission), when that span's last admission came,
// and its traffic second by second beside the reference's verdicts. It is
// what to read first when a mode's worst over-admission moves: a gap then
// a burst, a window boundary, one PoP or many.
type WorstIdentity struct {
	ID        int32         `json:"id"`
	Class     string        `json:"class,omitempty"` // "" for a trace without classes
	Peak      int64         `json:"peak"`
	PeakEndMs int64         `json:"peak_end_ms"` // ms from the trace's start to the worst span's last admission
	Seconds   []WorstSecond `json:"seconds"`     // the seconds it sent requests in, in order
}

// WorstSecond is one second of a WorstIdentity's traffic.
type WorstSecond struct {
	Second    int64 `json:"second"`    // from the trace's start
	Units     int64 `json:"units"`     // units asked
	Admitted  int64 `json:"admitted"`  // units the mode admitted
	Reference int64 `json:"reference"` // units the reference admitted
	Waited    int64 `json:"waited"`    // requests the mode made wait for a Redis round trip
	PoPs      int   `json:"pops"`      // distinct PoPs the requests came to
}

// worst returns the k identities with the highest peaks under o's
// verdicts (ties by identity), each with its seconds; ref is the
// reference's verdicts, in trace order.
func (e *Env) worst(o *outcome, ref []bool, k int) []WorstIdentity {
	if k <= 0 {
		return nil
	}
	w := e.Limit.Window.Milliseconds()
	by := map[int32][]int{} // identity → its requests, in trace order
	for i, r := range e.Trace.Requests {
		by[r.ID] = append(by[r.ID], i)
	}
	out := make([]WorstIdentity, 0, len(by))
	for id, is := range by {
		wi := WorstIdentity{ID: id}
		var admitted []int // indexes into is of admitted requests
		for j, i := range is {
			if o.allowed[i] {
				admitted = append(admitted, j)
			}
		}
		var sum int64
		first := 0
		for _, j := range admitted { // two pointers over the admitted requests, a window apart
			t := e.Trace.Requests[is[j]].At.Milliseconds()
			sum += int64(e.Trace.Requests[is[j]].N)
			for e.Trace.Requests[is[admitted[first]]].At.Milliseconds() <= t-w {
				sum -= int64(e.Trace.Requests[is[admitted[first]]].N)
				first++
			}
			if sum > wi.Peak {
				wi.Peak, wi.PeakEndMs = sum, t
			}
		}
		out = append(out, wi)
	}
	slices.SortFunc(out, func(a, b WorstIdentity) int {
		return cmp.Or(cmp.Compare(b.Peak, a.Peak), cmp.Compare(a.ID, b.ID))
	})
	out = out[:min(k, len(out))]
	for x := range out {
		wi := &out[x]
		if int(wi.ID) < len(e.Trace.ClassOf) && len(e.Trace.Classes) > 0 {
			wi.Class = e.Trace.Classes[e.Trace.ClassOf[wi.ID]]
		}
		var pops map[int16]bool
		for _, i := range by[wi.ID] {
			r := e.Trace.Requests[i]
			s := int64(r.At.Seconds())
			if len(wi.Seconds) == 0 || wi.Seconds[len(wi.Seconds)-1].Second != s {
				wi.Seconds = append(wi.Seconds, WorstSecond{Second: s})
				pops = map[int16]bool{}
			}
			sec := &wi.Seconds[len(wi.Seconds)-1]
			sec.Units += int64(r.N)
			if o.allowed[i] {
				sec.Admitted += int64(r.N)
			}
			if ref[i] {
				sec.Reference += int64(r.N)
			}
			if o.waited[i] {
				sec.Waited++
			}
			pops[r.PoP] = true
			sec.PoPs = len(pops)
		}
	}
	return out
}
