package engine

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sim/netmodel"
	"github.com/edgelimit/edgelimit/sim/traffic"
	goredis "github.com/redis/go-redis/v9"

	"github.com/stretchr/testify/require"
)

func testEnv(t *testing.T, scenario string) *Env {
	t.Helper()
	c := traffic.Config{Scenario: scenario, PoPs: 4, Identities: 300, Requests: 4000,
		Limit: 10, Window: time.Second, Seed: 3}
	tr, err := traffic.Generate(c)
	require.NoError(t, err)
	net, err := netmodel.WorldWide(c.PoPs, 5*time.Millisecond, 150*time.Millisecond)
	require.NoError(t, err)
	e := NewEnv(tr, net)
	e.Namespace = t.Name()
	return e
}

func TestLocalModeOveradmitsSpreadAttackers(t *testing.T) {
	e := testEnv(t, "spread-attack")
	r, err := Run(context.Background(), e, "local")
	require.NoError(t, err)
	require.False(t, r.RedisRoundTrips != 0 || r.RoundTripsSavedPct != 100 || r.AddedLatencyP99Ms != 0, "local made round trips or added latency: %+v", r)
	require.False(t, r.MaxOveradmission < 2 || r.FalseAllows == 0, "local over 4 PoPs: max over-admission %.2f, false allows %d; want ≥ 2 and > 0", r.MaxOveradmission, r.FalseAllows)
}

// slidingModel replays the trace through core's Go math, one state per
// identity, in trace order, request i at e.At(i): what an exact single store
// would decide.
func slidingModel(e *Env) []bool { return slidingModelAt(e, e.At) }

// slidingModelAt is slidingModel with request i at clock(i).
func slidingModelAt(e *Env, clock func(int) time.Time) []bool {
	states := map[int32]*core.WindowState{}
	out := make([]bool, len(e.Trace.Requests))
	for i, r := range e.Trace.Requests {
		s := states[r.ID]
		if s == nil {
			s = &core.WindowState{}
			states[r.ID] = s
		}
		out[i] = s.DecideSliding(e.Limit, clock(i).UnixMilli(), int64(r.N), true).Allowed
	}
	return out
}

func TestRedisModeIsTheSlidingCounterAlone(t *testing.T) {
	_, p := redistest.Client(t)
	e := testEnv(t, "mixed")
	e.RedisAddr = p.Addr
	o, err := runRedis(context.Background(), e)
	require.NoError(t, err)
	want := slidingModel(e)
	for i := range want {
		require.Equal(t, want[i], o.allowed[i], "request %d: redis allowed, against core's math", i)
		require.Equal(t, e.Net.RedisRTT[e.Trace.Requests[i].PoP], o.latency[i], "request %d: latency, want its PoP's RTT", i)
	}
	r := e.score("redis", o)
	require.False(t, r.RoundTripsPerDecision != 1 || r.RoundTripsSavedPct != 0, "redis mode: %v round trips per decision, want 1", r.RoundTripsPerDecision)
}

func TestAgendaOrder(t *testing.T) {
	var a agenda
	a.add(event{at: 5, kind: evTick, pop: 1})
	a.add(event{at: 5, kind: evDelivery, pop: 2})
	a.add(event{at: 3, kind: evTick, pop: 3})
	a.add(event{at: 5, kind: evDelivery, pop: 4})
	var got []int
	for {
		ev, ok := a.next(5)
		if !ok {
			break
		}
		got = append(got, ev.pop)
	}
	require.Equal(t, []int{3, 2, 4, 1}, got, "order")
}

func TestHandshakeIsNotARoundTrip(t *testing.T) {
	_, p := redistest.Client(t)
	e := testEnv(t, "mixed")
	e.RedisAddr = p.Addr
	c, trips := e.countedClient(4)
	defer c.Close()
	ctx := context.Background()
	err := c.Set(ctx, "a", "1", 0).Err()
	require.NoError(t, err)
	pipe := c.Pipeline()
	pipe.Get(ctx, "a")
	pipe.Get(ctx, "a")
	_, err = pipe.Exec(ctx)
	require.NoError(t, err)
	got := trips.n.Load()
	require.EqualValues(t, 2, got, "counted %d round trips, want 2 (one command, one pipeline)", got)
}

func TestNoScriptIsNotARoundTrip(t *testing.T) {
	_, p := redistest.Client(t)
	e := testEnv(t, "mixed")
	e.RedisAddr = p.Addr
	c, trips := e.countedClient(4)
	defer c.Close()
	s := goredis.NewScript("return 1")
	err := s.Run(context.Background(), c, nil).Err()
	require.NoError(t, err)
	got := trips.n.Load()
	require.EqualValues(t, 1, got, "EVALSHA refused + EVAL counted as %d round trips, want 1", got)
	pipe := c.Pipeline()
	other := goredis.NewScript("return 2")
	other.EvalSha(context.Background(), pipe, nil)
	other.EvalSha(context.Background(), pipe, nil)
	pipe.Exec(context.Background())
	got = trips.n.Load()
	require.EqualValues(t, 1, got, "a pipeline refused whole counted: %d round trips, want 1", got)
}

// dropMachine zeroes a result's measurements of the machine (wall time,
// memory), so two runs of one seed compare equal.
func dropMachine(r *Result) { r.WallSeconds, r.Memory = 0, nil }
