package budget

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// leaveDuring is a go-redis hook playing a caller that leaves while Redis
// runs a command: the command runs, then cancel (the caller's) is called,
// and the client, honouring the cancellation, returns the context's error
// instead of the reply. cancel nil: every command goes through as is.
type leaveDuring struct{ cancel context.CancelFunc }

func (h *leaveDuring) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *leaveDuring) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if h.cancel == nil {
			return err
		}
		h.cancel()
		return ctx.Err()
	}
}

func (h *leaveDuring) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// clusterCommands is how many CLUSTER commands the private redis-server
// of rdb ran (INFO commandstats): CheckClient's first command is CLUSTER
// SLOTS.
func clusterCommands(t *testing.T, rdb *redis.Client) string {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	for _, line := range strings.Split(info, "\n") {
		if strings.HasPrefix(line, "cmdstat_cluster|slots:") {
			calls, _, _ := strings.Cut(strings.TrimPrefix(line, "cmdstat_cluster|slots:"), ",")
			return calls
		}
	}
	return "calls=0"
}

// TestCheckClientCallerGone: CheckClient, the package's and a Limiter's,
// on a healthy Redis (the Limiter not started), called with a context already cancelled or
// cancelled while Redis answers it, returns a *CanceledError matching
// context.Canceled and not core.ErrUnavailable (the caller left: Redis is
// not down), as a decision does; cancelled first, Redis is sent nothing. A
// deadline that passed is still a *core.UnavailableError wrapping
// context.DeadlineExceeded (Redis did not answer within the caller's
// bound). Caught mutations: a cancellation reported as Redis unavailable
// (a health probe or a startup check whose caller left would say Redis is
// down), a deadline reported as a caller gone, a call sent for a caller
// already gone.
func TestCheckClientCallerGone(t *testing.T) {
	admin, p := redistest.Client(t)
	hook := &leaveDuring{}
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr})
	rdb.AddHook(hook)
	t.Cleanup(func() { rdb.Close() })
	l, err := New(Config{PoP: "p", Namespace: "myapp", Limit: core.PerWindow(5, time.Minute), PoPs: 1}, rdb, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	checks := map[string]func(context.Context) error{
		"CheckClient":         func(ctx context.Context) error { return CheckClient(ctx, rdb) },
		"Limiter.CheckClient": l.CheckClient,
	}
	for name, check := range checks {
		require.NoError(t, check(context.Background()), "%s: a healthy server not in cluster mode", name)

		before := clusterCommands(t, admin)
		gone, cancel := context.WithCancel(context.Background())
		cancel()
		err = check(gone)
		var ce *CanceledError
		assert.ErrorAs(t, err, &ce, "%s: cancelled first", name)
		assert.ErrorIs(t, err, context.Canceled, "%s: cancelled first", name)
		assert.NotErrorIs(t, err, core.ErrUnavailable, "%s: cancelled first", name)
		assert.Equal(t, before, clusterCommands(t, admin), "%s: nothing sent for a caller already gone", name)

		leaving, cancel := context.WithCancel(context.Background())
		hook.cancel = cancel
		err = check(leaving)
		hook.cancel = nil
		assert.ErrorAs(t, err, &ce, "%s: cancelled while Redis answered", name)
		assert.ErrorIs(t, err, context.Canceled, "%s: cancelled while Redis answered", name)
		assert.NotErrorIs(t, err, core.ErrUnavailable, "%s: cancelled while Redis answered", name)
		assert.NotEqual(t, before, clusterCommands(t, admin), "%s: Redis ran the check's CLUSTER SLOTS", name)

		late, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
		err = check(late)
		cancel()
		assert.ErrorIs(t, err, core.ErrUnavailable, "%s: a deadline passed", name)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "%s: a deadline passed", name)
		assert.NotErrorAs(t, err, &ce, "%s: a deadline passed", name)
	}
}
