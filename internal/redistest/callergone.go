package redistest

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// LeaveDuring is a go-redis hook playing a caller that leaves while Redis
// runs a command: the command runs, then Cancel (the caller's) is called,
// and the client, honouring the cancellation, returns the context's error
// instead of the reply. Cancel nil (the zero value): every command goes
// through as is.
type LeaveDuring struct{ Cancel context.CancelFunc }

// DialHook is go-redis' dial hook: unchanged.
func (h *LeaveDuring) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook runs the command, then leaves when Cancel is set.
func (h *LeaveDuring) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if h.Cancel == nil {
			return err
		}
		h.Cancel()
		return ctx.Err()
	}
}

// ProcessPipelineHook is go-redis' pipeline hook: unchanged.
func (h *LeaveDuring) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// CheckCallerGone runs each of checks (a backend's CheckClient functions,
// on a client to a healthy plain Redis carrying hook) with a context
// cancelled first, one cancelled while Redis answers (hook), and one past
// its deadline, and asserts what a caller that left must get: cancelled,
// an error canceled accepts (the backend's own cancellation type) that
// matches context.Canceled and not core.ErrUnavailable, and, cancelled
// first, no CLUSTER SLOTS sent (admin, a second client to the same
// server, reads the server's count); past its deadline, an error matching
// core.ErrUnavailable and context.DeadlineExceeded that canceled refuses.
func CheckCallerGone(t *testing.T, admin *redis.Client, hook *LeaveDuring, checks map[string]func(context.Context) error, canceled func(error) bool) {
	t.Helper()
	slots := func() int64 { n, _ := CommandStats(t, admin, "cluster|slots"); return n }
	for name, check := range checks {
		require.NoError(t, check(context.Background()), "%s: a healthy server not in cluster mode", name)

		before := slots()
		gone, cancel := context.WithCancel(context.Background())
		cancel()
		err := check(gone)
		assert.True(t, canceled(err), "%s: cancelled first: the backend's cancellation error, got %v", name, err)
		assert.ErrorIs(t, err, context.Canceled, "%s: cancelled first", name)
		assert.NotErrorIs(t, err, core.ErrUnavailable, "%s: cancelled first", name)
		assert.Equal(t, before, slots(), "%s: nothing sent for a caller already gone", name)

		leaving, cancel := context.WithCancel(context.Background())
		hook.Cancel = cancel
		err = check(leaving)
		hook.Cancel = nil
		assert.True(t, canceled(err), "%s: cancelled while Redis answered: the backend's cancellation error, got %v", name, err)
		assert.ErrorIs(t, err, context.Canceled, "%s: cancelled while Redis answered", name)
		assert.NotErrorIs(t, err, core.ErrUnavailable, "%s: cancelled while Redis answered", name)
		assert.Greater(t, slots(), before, "%s: Redis ran the check's CLUSTER SLOTS", name)

		late, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
		err = check(late)
		cancel()
		assert.ErrorIs(t, err, core.ErrUnavailable, "%s: a deadline passed", name)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "%s: a deadline passed", name)
		assert.False(t, canceled(err), "%s: a deadline passed is no caller gone", name)
	}
}
