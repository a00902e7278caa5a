package engine

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/sim/netmodel"

	"github.com/stretchr/testify/require"
)

// TestCrashAnswersItsOpenRequests: requests a crashed PoP had sent to
// Redis and not yet got the reply of die with it: denied, their latency
// ending at the crash. No request of that PoP from before the crash is
// answered after it, and some were open (the test would not see a crash
// that forgot them).
func TestCrashAnswersItsOpenRequests(t *testing.T) {
	crash := netmodel.Crash{PoP: 3, At: 2500 * time.Millisecond}
	e := faultEnv(t, netmodel.Faults{Crashes: []netmodel.Crash{crash}})
	o, err := runBudgetHonest(context.Background(), e, budgetOptions{})
	require.NoError(t, err)
	killed := 0
	for i, r := range e.Trace.Requests {
		if int(r.PoP) != crash.PoP || r.At >= crash.At {
			continue
		}
		switch end := r.At + o.latency[i]; {
		case end > crash.At:
			require.Failf(t, "answered after the crash", "request %d at %v answered at %v, after its PoP crashed at %v", i, r.At, end, crash.At)
		case end == crash.At && o.latency[i] > 0:
			require.False(t, o.allowed[i], "request %d open at the crash was allowed", i)
			killed++
		}
	}
	require.NotEqualValues(t, 0, killed, "no request was open at the crash")
	t.Logf("%d requests open at the crash", killed)
}
