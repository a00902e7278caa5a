package local

import "github.com/edgelimit/edgelimit/core"

// State is a copy of one identity's stored state, for a higher layer
// (diagnostics, a limiter built on this one) that needs the counters rather than a
// decision. Only the field of the limiter's algorithm is set: Window for
// SlidingWindow and FixedWindow, Bucket for TokenBucket, Log for SlidingLog.
// The zero value is the state of an identity never seen.
type State struct {
	Window core.WindowState
	Bucket core.BucketState
	Log    core.LogState // Entries is a copy, safe to keep
}

// set copies the stored state (a pointer to it) into st.
func (st *State) set(stored any) {
	switch v := stored.(type) {
	case *core.WindowState:
		st.Window = *v
	case *core.BucketState:
		st.Bucket = *v
	case *core.LogState:
		st.Log = core.LogState{Entries: append([]core.LogEntry(nil), v.Entries...), Units: v.Units}
	}
}
