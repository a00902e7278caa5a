package budget

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failHook is a go-redis hook that fails script calls (EVALSHA, EVAL):
// every one, without sending it, while down is set (a Redis the client
// cannot reach), and, once lose is armed, the next one after Redis ran it
// (its reply lost on the way back).
type failHook struct{ down, lose atomic.Bool }

var (
	errUnreachable = errors.New("dial tcp: connection refused")
	errReplyLost   = errors.New("read tcp: connection reset by peer")
)

func isScript(cmd redis.Cmder) bool { return cmd.Name() == "evalsha" || cmd.Name() == "eval" }

func (h *failHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *failHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !isScript(cmd) {
			return next(ctx, cmd)
		}
		if h.down.Load() {
			cmd.SetErr(errUnreachable)
			return errUnreachable
		}
		err := next(ctx, cmd)
		if err == nil && h.lose.CompareAndSwap(true, false) {
			cmd.SetErr(errReplyLost)
			return errReplyLost
		}
		return err
	}
}

func (h *failHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !h.down.Load() {
			return next(ctx, cmds)
		}
		for _, c := range cmds {
			c.SetErr(errUnreachable)
		}
		return errUnreachable
	}
}

// failingLimiter is a Limiter of PoPs PoPs on a real Redis whose script
// calls hook can fail, its clock manual at w0+5 and its lease taken, and
// the window x of that time. NoWait makes every identity a full entry, so
// its free unit is an op to report.
func failingLimiter(t *testing.T, pops int) (l *Limiter, rdb *redis.Client, hook *failHook, clk *core.ManualClock, x int64) {
	t.Helper()
	rdb, _ = redistest.Client(t)
	hook = &failHook{}
	rdb.AddHook(hook)
	clk = core.NewManualClock(time.UnixMilli(w0 + 5))
	l, err := New(Config{PoP: "p", Incarnation: 1, Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: pops,
		NoWait: true}, rdb, clk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	require.NoError(t, script.Load(context.Background(), rdb).Err(), "the script loaded: a call is one EVALSHA")
	require.NoError(t, l.Sync(context.Background()), "the lease")
	return l, rdb, hook, clk, w0 / testWindow
}

// TestFailedResetKeepsView: on a real Redis, a Reset whose call never
// reaches Redis returns an error matching core.ErrUnavailable and leaves
// this PoP's view as it was: an identity its deny cache denies stays
// denied while Redis is down (the fallback decides on the view, and
// Redis still holds its full count), and an identity's unreported free
// unit stays counted on the view (Peek's Remaining) and reaches Redis,
// once, with the first Sync after Redis is back. Caught mutations: the
// view forgotten when the Reset is planned (the old behaviour: the
// denied identity admitted on the forgotten view, Remaining 10, the free
// unit never reported: C 0), the ops the call carried dropped on a
// failure, or sent twice (C 2).
func TestFailedResetKeepsView(t *testing.T) {
	l, rdb, hook, clk, x := failingLimiter(t, 1)
	ctx := context.Background()

	d, err := l.AllowN(ctx, "spent", clk.Now(), 1)
	require.NoError(t, err)
	require.Equal(t, core.SourceLocal, d.Source, "the free unit, unreported")
	require.NotEmpty(t, l.m.view["spent"].pending(), "an op to report")
	_, err = l.AllowN(ctx, "full", clk.Now(), 1)
	require.NoError(t, err)
	d, err = l.AllowN(ctx, "full", clk.Now(), 9)
	require.NoError(t, err)
	require.True(t, d.Allowed, "the limit filled at Redis")
	d, err = l.AllowN(ctx, "full", clk.Now(), 1)
	require.NoError(t, err)
	require.Equal(t, core.SourceCachedDeny, d.Source, "denied by the deny cache")
	require.Equal(t, int64(10), readState(t, rdb, l.m, "full", x).C)

	hook.down.Store(true)
	require.ErrorIs(t, l.Reset(ctx, "full"), core.ErrUnavailable, "the Reset's call failed")
	require.ErrorIs(t, l.Reset(ctx, "spent"), core.ErrUnavailable, "the Reset's call failed")
	d, _ = l.AllowN(ctx, "full", clk.Now(), 1)
	assert.False(t, d.Allowed, "Redis still counts 10: the view still denies")
	d, err = l.Peek(ctx, "spent", clk.Now())
	require.ErrorIs(t, err, core.ErrUnavailable)
	assert.Equal(t, int64(9), d.Remaining, "the unreported free unit still counted on the view")

	hook.down.Store(false)
	require.NoError(t, l.Sync(ctx), "Redis is back")
	require.NoError(t, l.Sync(ctx), "and a second Sync sends nothing of it again")
	assert.Equal(t, int64(1), readState(t, rdb, l.m, "spent", x).C, "the free unit reported once")
	assert.Equal(t, int64(10), readState(t, rdb, l.m, "full", x).C, "nothing was reset at Redis")
	d, err = l.AllowN(ctx, "full", clk.Now(), 1)
	require.NoError(t, err)
	assert.False(t, d.Allowed, "Redis up: still denied")
}

// TestResetReplyLostAppliedOnce: on a real Redis, a Reset that Redis
// applied but whose reply was lost returns an error matching
// core.ErrUnavailable; its identity's unreported free unit, which the
// Reset gave up with no units (the slot claimed, C forgotten), is sent
// again by the next Sync under the Reset's number and found applied: C
// stays 0 and the slot is claimed once. Caught mutation: a failed Reset's
// ops put back among the unreported and reported again by a batch (C 1,
// the slot claimed twice, which hides another PoP's slot).
func TestResetReplyLostAppliedOnce(t *testing.T) {
	l, rdb, hook, clk, x := failingLimiter(t, 2)
	ctx := context.Background()
	d, err := l.AllowN(ctx, "k", clk.Now(), 1)
	require.NoError(t, err)
	require.Equal(t, core.SourceLocal, d.Source, "the free unit, unreported")
	require.NotEmpty(t, l.m.view["k"].pending(), "an op to report")
	before := readState(t, rdb, l.m, "k", x)

	hook.lose.Store(true)
	require.ErrorIs(t, l.Reset(ctx, "k"), core.ErrUnavailable, "the reply was lost")
	applied := readState(t, rdb, l.m, "k", x)
	assert.Equal(t, before.K+1, applied.K, "Redis applied the Reset: the slot claimed")
	assert.Zero(t, applied.C, "with no units")

	require.NoError(t, l.Sync(ctx))
	require.NoError(t, l.Sync(ctx))
	after := readState(t, rdb, l.m, "k", x)
	assert.Zero(t, after.C, "the ops sent again were found applied: no unit counted")
	assert.Equal(t, applied.K, after.K, "the slot claimed once")
}

// TestResetBacklogOnRedis: on a real Redis, after a Reset that never
// reached Redis carrying an unreported free unit, 31 more Resets run and
// the next returns an error matching core.ErrUnavailable with nothing
// sent; the next Sync reports the unit (C 1: applied once, not refused as
// below Redis' window of the Resets' numbers), and Resets go on. Caught
// mutation: Resets numbered past the window (the 32nd goes out, and the
// unit would never be counted).
func TestResetBacklogOnRedis(t *testing.T) {
	l, rdb, hook, clk, x := failingLimiter(t, 1)
	ctx := context.Background()
	d, err := l.AllowN(ctx, "k", clk.Now(), 1)
	require.NoError(t, err)
	require.Equal(t, core.SourceLocal, d.Source, "the free unit, unreported")

	hook.down.Store(true)
	require.ErrorIs(t, l.Reset(ctx, "k"), core.ErrUnavailable, "the Reset's call failed")
	hook.down.Store(false)
	for i := range reportWindow - 1 {
		require.NoError(t, l.Reset(ctx, "other"), "Reset %d after the failed one", i+1)
	}
	err = l.Reset(ctx, "other")
	require.ErrorIs(t, err, core.ErrUnavailable, "one more would push the failed Reset's number out of Redis' window")
	assert.ErrorIs(t, err, errResetBacklog)

	require.NoError(t, l.Sync(ctx), "the failed Reset's unit sent again")
	assert.Equal(t, int64(1), readState(t, rdb, l.m, "k", x).C, "applied once")
	assert.NoError(t, l.Reset(ctx, "other"), "Resets go on")
}
