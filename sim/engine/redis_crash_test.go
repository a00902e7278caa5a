package engine

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/sim/netmodel"

	"github.com/stretchr/testify/require"
)

// TestPureRedisCrashAnswersNoOpenRequest checks pure Redis' crash against
// the same run without it: the requests the crashed PoP had sent and
// whose answer was due after the crash are denied, answered at the crash,
// none admitted uncounted; every other request, and Redis' own decisions
// (the calls still ran), are as without the crash; and some were open.
// It catches a crash ignored by pure Redis (the open requests answered
// after their process died) and one that reaches past its PoP or its
// instant.
func TestPureRedisCrashAnswersNoOpenRequest(t *testing.T) {
	crash := netmodel.Crash{PoP: 3, At: 2500 * time.Millisecond}
	e := faultEnv(t, netmodel.Faults{})
	ctx := context.Background()
	e.Namespace = t.Name() + "healthy"
	healthy, err := runRedisHonest(ctx, e)
	require.NoError(t, err)
	e.Namespace, e.Faults = t.Name()+"crash", netmodel.Faults{Crashes: []netmodel.Crash{crash}}
	crashed, err := runRedisHonest(ctx, e)
	require.NoError(t, err)
	killed := 0
	for i, r := range e.Trace.Requests {
		open := int(r.PoP) == crash.PoP && r.At < crash.At && r.At+healthy.latency[i] > crash.At
		if !open {
			require.Equal(t, healthy.allowed[i], crashed.allowed[i], "request %d at %v, PoP %d: allowed", i, r.At, r.PoP)
			require.Equal(t, healthy.latency[i], crashed.latency[i], "request %d at %v, PoP %d: latency", i, r.At, r.PoP)
			require.Equal(t, healthy.lostAt[i], crashed.lostAt[i], "request %d: lost", i)
			continue
		}
		killed++
		require.False(t, crashed.allowed[i], "request %d at %v open at the crash was allowed", i, r.At)
		require.Equal(t, crash.At, r.At+crashed.latency[i], "request %d at %v: answered at", i, r.At)
		require.Zero(t, crashed.lostAt[i], "request %d: admitted uncounted though unanswered", i)
		require.True(t, crashed.waited[i], "request %d: its call went to Redis", i)
	}
	require.NotZero(t, killed, "no request was open at the crash")
	t.Logf("%d requests open at the crash", killed)
}
