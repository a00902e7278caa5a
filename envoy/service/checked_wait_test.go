package service

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestCheckedDescriptorWaitsForItsHits: a descriptor checked (not
// counted) after an earlier one denied the request, whose hits_addend is
// 5, reports the wait a request counting those 5 hits gets at the same
// instant (duration_until_reset), on the local, the redis and the budget
// backends (core.PeekerN; budget as a lone instance, PoPs 1): once the peeked unit fits (the global limit's previous
// window fading) the 5 do not yet, and once one unit is left the 5 need
// more of the window to fade. It catches the wait of one unit (Peek's
// RetryAfter: 1 ms where 24.001 s is due) or the time until quota starts
// to come back (30.001 s where 45.001 s is due) reported for n units.
func TestCheckedDescriptorWaitsForItsHits(t *testing.T) {
	cases := []struct {
		name  string
		spent int           // global units spent at poolT0+at−window by distinct clients
		at    time.Duration // the check's time
	}{
		{"one unit fits soon, 5 later", 10, time.Minute}, // Peek denies: its wait is one unit's
		{"one unit left, 5 later", 8, 30 * time.Second},  // Peek admits with 2 left: until quota comes back
	}
	for _, name := range []string{"local", "redis", "budget"} {
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				clk := core.NewManualClock(poolT0)
				var b Backend = NewLocal(clk, 0)
				switch name {
				case "redis":
					b = NewRedis(harnessClient(t, 5*time.Second), RedisOptions{Clock: clk, Timeout: 5 * time.Second})
				case "budget":
					b = NewBudget(BudgetOptions{PoP: "a", Redis: harnessClient(t, 5*time.Second), PoPs: 1, Clock: clk, Sync: time.Hour})
				}
				t.Cleanup(func() { b.Close(context.Background()) })
				s, err := New(Options{Backend: b, Clock: clk})
				require.NoError(t, err)
				s.SetConfig(loadRules(t, perIPAndGlobal(10)))
				ctx := context.Background()
				ask := func(req *rlsv3.RateLimitRequest) *rlsv3.RateLimitResponse {
					resp, err := s.ShouldRateLimit(ctx, req)
					require.NoError(t, err)
					return resp
				}
				clk.Set(poolT0.Add(c.at % time.Minute))
				for i := 1; i <= c.spent; i++ {
					require.Equal(t, rlsv3.RateLimitResponse_OK, ask(ipThenGlobal(fmt.Sprintf("10.0.0.%d", i))).OverallCode)
				}
				clk.Set(poolT0.Add(c.at))
				req := ipThenGlobal("10.0.0.1") // over its own 1 a minute
				req.Descriptors[1].HitsAddend = wrapperspb.UInt64(5)
				checked := ask(req)
				require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, checked.Statuses[0].Code, "the client is over its own limit")
				require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, checked.Statuses[1].Code, "5 do not fit in the global limit")
				counted := ask(globalOnly(5)).Statuses[0]
				require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, counted.Code, "5 counted do not fit either")
				assert.Equal(t, counted.DurationUntilReset.AsDuration(), checked.Statuses[1].DurationUntilReset.AsDuration(),
					"the checked 5 wait as long as the counted 5")
			})
		}
	}
}

// globalOnly is a request of the global descriptor alone, of hits hits.
func globalOnly(hits uint64) *rlsv3.RateLimitRequest {
	return &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*commonv3.RateLimitDescriptor{{
		Entries:    []*commonv3.RateLimitDescriptor_Entry{{Key: "generic_key", Value: "global"}},
		HitsAddend: wrapperspb.UInt64(hits)}}}
}
