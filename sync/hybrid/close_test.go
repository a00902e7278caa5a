package hybrid

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPeekAfterClose: Peek after Close returns core.ErrClosed, as every
// decision does; a bad key still reports core.ErrInvalid.
func TestPeekAfterClose(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", nil)
	mustAllow(t, n, "k", t0)
	require.NoError(t, n.Close(context.Background()), "Close")
	_, err := n.Peek(context.Background(), "k", t0)
	assert.ErrorIs(t, err, core.ErrClosed, "Peek of a known key after Close")
	_, err = n.Peek(context.Background(), "never-seen", t0)
	assert.ErrorIs(t, err, core.ErrClosed, "Peek of an unknown key after Close")
	_, err = n.Peek(context.Background(), "", t0)
	assert.ErrorIs(t, err, core.ErrInvalid, "Peek of an empty key after Close")
	_, err = n.AllowN(context.Background(), "k", t0, 1)
	assert.ErrorIs(t, err, core.ErrClosed, "AllowN after Close")
}

// parkedIn reports whether some goroutine not running has fn on its
// stack. The tests below need a decision held inside the Node, past its
// closed check, and Close waiting for it; neither state has an event of its
// own to wait on (one is a goroutine parked on a mutex), so they read the
// goroutines' stacks, polling with a bound only a hang reaches.
func parkedIn(fn string) bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte(fn)) && !bytes.Contains(g, []byte("[running]")) &&
			!bytes.Contains(g, []byte("[runnable]")) {
			return true
		}
	}
	return false
}

// TestCloseWaitsForDecisionsInFlight: a local decision that passed the
// closed check before Close and counts its unit after Close has looked at
// the view (held here on the identity's lock) is waited for, and its unit
// reaches Redis in Close's flush. Close used to sleep 2 ms and flush
// again only if something was pending by then.
func TestCloseWaitsForDecisionsInFlight(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", nil)
	ms := core.Millis(t0)
	ent := n.entry("s", ms, false) // in the view, no own counts: nothing for Close to flush
	ent.mu.Lock()
	decided := make(chan error, 1)
	go func() {
		_, err := n.AllowN(context.Background(), "s", t0, 1)
		decided <- err
	}()
	require.Eventually(t, func() bool { return parkedIn("hybrid.(*Node).lockLive") }, time.Minute, time.Millisecond,
		"the decision to park on the identity's lock, past the closed check")
	closed := make(chan error, 1)
	go func() { closed <- n.Close(context.Background()) }()
	returnedEarly := false
	require.Eventually(t, func() bool {
		select {
		case err := <-closed:
			closed <- err
			returnedEarly = true
			return true
		default:
			return parkedIn("hybrid.(*Node).awaitDecisions")
		}
	}, time.Minute, time.Millisecond, "Close to return or to wait for the decision under way")
	assert.False(t, returnedEarly, "Close returned while a decision that began before it was under way")
	ent.mu.Unlock()
	require.NoError(t, <-decided, "the decision that began before Close")
	require.NoError(t, <-closed, "Close")
	assert.Equal(t, int64(1), e.redisTotal(DefaultNamespace, "s", e.idx(n)),
		"Redis holds the unit of the decision Close waited for")
}

// TestCloseBoundedByCtxWhileWaiting: Close whose ctx ends while a decision
// is under way stops waiting and returns ctx's error.
func TestCloseBoundedByCtxWhileWaiting(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", nil)
	ent := n.entry("s", core.Millis(t0), false)
	ent.mu.Lock()
	decided := make(chan error, 1)
	go func() {
		_, err := n.AllowN(context.Background(), "s", t0, 1)
		decided <- err
	}()
	require.Eventually(t, func() bool { return parkedIn("hybrid.(*Node).lockLive") }, time.Minute, time.Millisecond,
		"the decision to park on the identity's lock")
	ctx, cancel := context.WithCancel(context.Background())
	closed := make(chan error, 1)
	go func() { closed <- n.Close(ctx) }()
	require.Eventually(t, func() bool { return parkedIn("hybrid.(*Node).awaitDecisions") }, time.Minute, time.Millisecond,
		"Close to wait for the decision under way")
	cancel()
	assert.ErrorIs(t, <-closed, context.Canceled, "Close's error once its ctx ended while waiting")
	ent.mu.Unlock()
	assert.NoError(t, <-decided, "the decision that began before Close")
}
