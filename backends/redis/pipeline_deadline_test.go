package redis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// hang is how long a test waits for an event before calling it a hang: far
// beyond any delay of a loaded machine, far under the waits the deadline
// tests tell apart (a limiter timeout of an hour, a client with no read
// timeout).
const hang = 30 * time.Second

// answered runs f in a goroutine and returns its error, failing the test if
// f has not returned within hang.
func answered(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(hang):
		require.FailNow(t, fmt.Sprintf("%s: no answer within %s", what, hang))
		return nil
	}
}

// TestPipelinedCallHonoursCallerDeadline: against a server that accepts
// connections and never answers, a pipelined decision returns when the
// caller's context ends, not after the limiter's own timeout: that is an
// hour and the client has no read timeout, so the call returns at all only
// by the caller's deadline (when is not timed: see answered).
func TestPipelinedCallHonoursCallerDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold it open, answer nothing
		}
	}()
	// Without ContextTimeoutEnabled the call is handed to another goroutine
	// so that the caller can leave; with it, a lone call runs in the
	// caller's goroutine and go-redis ends the read at the ctx deadline.
	for _, ctxTimeouts := range []bool{false, true} {
		c := goredis.NewClient(&goredis.Options{Addr: ln.Addr().String(), MaxRetries: -1, DisableIdentity: true,
			ContextTimeoutEnabled: ctxTimeouts, ReadTimeout: -1})
		defer c.Close()
		l, err := New(c, core.PerWindow(10, time.Minute), WithPipelining(100*time.Microsecond, 16), WithTimeout(time.Hour))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		err = answered(t, fmt.Sprintf("ContextTimeoutEnabled %v: pipelined call with a 50ms caller deadline (limiter timeout 1h)", ctxTimeouts), func() error {
			_, err := l.AllowN(ctx, "k", time.Now(), 1)
			return err
		})
		require.ErrorIs(t, err, core.ErrUnavailable, "ContextTimeoutEnabled %v: err %v, want ErrUnavailable", ctxTimeouts, err)
	}
}

// TestPipelinedCallsBoundedByTimeout: against a server that never answers,
// every pipelined decision of many concurrent callers (with no deadline of
// their own) returns ErrUnavailable once the limiter's timeout has passed
// since it arrived, whether it rode in the first pipelines, queued behind
// them or ran alone in its caller's goroutine. Not before the timeout
// (a loaded machine only makes a call later), and at all: the client has no
// read timeout, so only the limiter's ends a call (how long after is the
// scheduler's business: each waits on a channel bounded by hang).
func TestPipelinedCallsBoundedByTimeout(t *testing.T) {
	addr := silentServer(t)
	for _, ctxTimeouts := range []bool{false, true} { // with it, the first call runs in its caller's goroutine
		c := goredis.NewClient(&goredis.Options{Addr: addr, MaxRetries: -1, DisableIdentity: true, ContextTimeoutEnabled: ctxTimeouts, ReadTimeout: -1})
		defer c.Close()
		boundedByTimeout(t, c)
	}
}

func boundedByTimeout(t *testing.T, c *goredis.Client) {
	const timeout = 150 * time.Millisecond
	l, err := New(c, core.PerWindow(10, time.Minute), WithPipelining(time.Millisecond, 4), WithTimeout(timeout))
	require.NoError(t, err)
	const callers = 24 // 6 pipelines of 4: most wait behind the 2 in flight
	took := make(chan time.Duration, callers)
	errs := make(chan error, callers)
	for i := 0; i < callers; i++ {
		go func(i int) {
			start := time.Now()
			_, err := l.AllowN(context.Background(), fmt.Sprint("k", i), time.Now(), 1)
			took <- time.Since(start)
			errs <- err
		}(i)
	}
	deadline := time.After(hang)
	for i := 0; i < callers; i++ {
		var d time.Duration
		select {
		case d = <-took:
		case <-deadline:
			require.FailNow(t, fmt.Sprintf("%d of %d pipelined calls returned within %s; the limiter's timeout is %s", i, callers, hang, timeout))
		}
		err := <-errs
		require.ErrorIs(t, err, core.ErrUnavailable, "err %v, want ErrUnavailable", err)
		// A lower bound only: no call may fail before its timeout.
		require.GreaterOrEqual(t, d, timeout-10*time.Millisecond, "a pipelined call returned after %s; the limiter's timeout is %s", d, timeout)
	}
}

// silentServer listens on a loopback port, accepts connections and never
// answers; it stops with the test.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	return ln.Addr().String()
}

// TestExpiredQueuedCallsAreNeverSent: with Redis paused for writes (CLIENT
// PAUSE, so scripts block), 24 callers that wait 100ms (by the limiter's
// timeout, or by their own context's deadline under a 5s limiter timeout,
// as behind the HTTP middleware) all get ErrUnavailable in time. Only the
// calls already in the 2 pipelines in flight reach Redis when the pause
// ends; the ones still queued when their callers left are dropped unsent,
// so no decision a caller was told failed is counted behind its back,
// beyond those already on the wire. Both with and without a client that
// bounds reads by context deadlines.
func TestExpiredQueuedCallsAreNeverSent(t *testing.T) {
	base, _ := redistest.Client(t)
	for _, ctxTimeouts := range []bool{false, true} {
		for _, byCaller := range []bool{false, true} {
			c := goredis.NewClient(&goredis.Options{Addr: base.Options().Addr, ContextTimeoutEnabled: ctxTimeouts})
			t.Cleanup(func() { c.Close() })
			base.FlushDB(context.Background())
			written, failed := pausedRun(t, c, base, byCaller)
			require.Equal(t, int32(24), failed, "ContextTimeoutEnabled %v, deadline from caller %v: %d of 24 callers failed; %d of their calls reached Redis, want all failed and at most the 8 in flight", ctxTimeouts, byCaller, failed, written)
			require.LessOrEqual(t, written, int64(2*4), "ContextTimeoutEnabled %v, deadline from caller %v: %d of 24 callers failed; %d of their calls reached Redis, want all failed and at most the 8 in flight", ctxTimeouts, byCaller, failed, written)
			t.Logf("ContextTimeoutEnabled %v, deadline from caller %v: 24 callers failed; %d of their calls were on the wire and ran when the pause ended",
				ctxTimeouts, byCaller, written)
		}
	}
}

// pausedRun pauses Redis for 600ms and runs 24 pipelined callers that each
// wait 100ms, by the limiter's timeout or (byCaller) their context's
// deadline; it returns how many of their calls Redis ran in the end and how
// many callers got ErrUnavailable.
func pausedRun(t *testing.T, c, admin *goredis.Client, byCaller bool) (written int64, failed int32) {
	timeout := 100 * time.Millisecond
	if byCaller {
		timeout = 5 * time.Second
	}
	l := newLimiter(t, c, core.PerWindow(10, time.Minute), WithPipelining(time.Millisecond, 4), WithTimeout(timeout))
	// loads the script
	_, err := l.AllowN(context.Background(), "warm", time.Now(), 1)
	require.NoError(t, err)
	err = admin.Do(context.Background(), "CLIENT", "PAUSE", 600, "WRITE").Err()
	require.NoError(t, err)
	var wg sync.WaitGroup
	var nfailed atomic.Int32
	for i := 0; i < 24; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			if !byCaller {
				ctx = context.Background()
			}
			if _, err := l.AllowN(ctx, fmt.Sprint("k", i), time.Now(), 1); errors.Is(err, core.ErrUnavailable) {
				nfailed.Add(1)
			}
		}(i)
	}
	wg.Wait()
	// Every pipeline has left the batcher (written or dropped)...
	require.Eventually(t, func() bool {
		l.batch.mu.Lock()
		defer l.batch.mu.Unlock()
		return l.batch.inflight == 0 && len(l.batch.pending) == 0
	}, hang, time.Millisecond, "pipelines still in flight %s after every caller left", hang)
	// ...then the pause ends at once (not after a sleep): Redis runs the
	// postponed calls of the paused clients before it reads admin's next
	// command, so the DBSIZE after the UNPAUSE counts all that was on the
	// wire.
	err = admin.Do(context.Background(), "CLIENT", "UNPAUSE").Err()
	require.NoError(t, err)
	return dbsize(t, admin) - 1, nfailed.Load() // minus "warm"
}

// TestPipelineOutlivesItsOldestCall: a pipeline carrying one call with 5ms
// left and others with seconds left, sent while Redis is paused for 100ms,
// answers the others: it ends by its latest deadline. (Ending it by the
// earliest, as a first version did, failed the whole batch whenever its
// oldest call was nearly out of time: go-redis bounds the read by it.)
func TestPipelineOutlivesItsOldestCall(t *testing.T) {
	base, _ := redistest.Client(t)
	c := goredis.NewClient(&goredis.Options{Addr: base.Options().Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	l := newLimiter(t, c, core.PerWindow(10, time.Minute), WithPipelining(time.Millisecond, 8))
	// loads the script
	_, err := l.AllowN(context.Background(), "warm", time.Now(), 1)
	require.NoError(t, err)
	now := monoNow()
	calls := make([]*call, 3)
	for i := range calls {
		left := 5 * time.Second
		if i == 0 {
			left = 5 * time.Millisecond
		}
		calls[i] = &call{req: l.newRequest(l.Key(fmt.Sprint("k", i)), time.Now().UnixMilli(), 1, true),
			deadline: now + int64(left), done: make(chan struct{})}
	}
	err = base.Do(context.Background(), "CLIENT", "PAUSE", 100, "WRITE").Err()
	require.NoError(t, err)
	l.runPipeline(calls)
	for i, call := range calls[1:] {
		require.NoError(t, call.err, "call %d, with seconds left, failed with the pipeline", i+1)
	}
}

// TestLoneCallReleasesItsSlot: a call run in its caller's goroutine (a
// client honouring context deadlines, a context that can never be
// cancelled) gives back its in-flight slot, even when a go-redis hook
// panics under it; the next calls still go out.
func TestLoneCallReleasesItsSlot(t *testing.T) {
	base, _ := redistest.Client(t)
	c := goredis.NewClient(&goredis.Options{Addr: base.Options().Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	var panics atomic.Int32
	panics.Store(2)
	c.AddHook(panicHook{&panics})
	l := newLimiter(t, c, core.PerWindow(10, time.Minute), WithPipelining(time.Hour, 8))
	for i := 0; i < 2; i++ {
		func() {
			defer func() { _ = recover() }()
			l.AllowN(context.Background(), "lone", time.Now(), 1)
		}()
	}
	for i := 0; i < 3; i++ {
		_, err := l.AllowN(context.Background(), "lone", time.Now(), 1)
		require.NoError(t, err, "call %d after two panics: %v (a slot stayed in flight?)", i, err)
	}
	l.batch.mu.Lock()
	inflight := l.batch.inflight
	l.batch.mu.Unlock()
	require.Equal(t, 0, inflight, "in flight after every call returned: %d, want 0 (panics left to throw: %d)", inflight, panics.Load())
	require.LessOrEqual(t, panics.Load(), int32(0), "in flight after every call returned: %d, want 0 (panics left to throw: %d)", inflight, panics.Load())
}

// panicHook panics in the first n script calls it sees.
type panicHook struct{ n *atomic.Int32 }

func (panicHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h panicHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmd.Name() == "evalsha" && h.n.Add(-1) >= 0 {
			panic("hook")
		}
		return next(ctx, cmd)
	}
}
func (panicHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// TestPipelinedCallHonoursCancel: with a client honouring context deadlines,
// a call whose context is cancelled (no deadline) returns at the
// cancellation with context.Canceled, not at the limiter's timeout: such a
// call is handed off, never run in the caller's goroutine, because go-redis
// does not notice a cancellation on the socket.
func TestPipelinedCallHonoursCancel(t *testing.T) {
	addr := silentServer(t)
	c := goredis.NewClient(&goredis.Options{Addr: addr, MaxRetries: -1, DisableIdentity: true, ContextTimeoutEnabled: true, ReadTimeout: -1})
	defer c.Close()
	l, err := New(c, core.PerWindow(10, time.Minute), WithPipelining(100*time.Microsecond, 16), WithTimeout(time.Hour))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	// The cancel comes 20 ms in, so the call has been handed off first
	// (the order matters, not the 20 ms); the limiter's timeout is an hour
	// and the client has no read timeout, so the call returns at all only
	// by the cancellation.
	time.AfterFunc(20*time.Millisecond, cancel)
	err = answered(t, "call cancelled at 20ms (limiter timeout 1h)", func() error {
		_, err := l.AllowN(ctx, "k", time.Now(), 1)
		return err
	})
	require.ErrorIs(t, err, context.Canceled, "cancelled at 20ms: returned with %v; want context.Canceled", err)
}

// TestPipelinedHugeTimeout: WithTimeout(math.MaxInt64) (a plausible "no
// timeout") still decides: the deadline saturates instead of overflowing
// into the past, where every call would expire unsent.
func TestPipelinedHugeTimeout(t *testing.T) {
	c, _ := redistest.Client(t)
	l := newLimiter(t, c, core.PerWindow(10, time.Minute), WithPipelining(time.Millisecond, 8), WithTimeout(math.MaxInt64))
	for i := 0; i < 3; i++ {
		d, err := l.AllowN(context.Background(), "huge", time.Now(), 1)
		require.NoError(t, err, "call %d with WithTimeout(MaxInt64): %+v, %v", i, d, err)
		require.True(t, d.Allowed, "call %d with WithTimeout(MaxInt64): %+v, %v", i, d, err)
	}
}
