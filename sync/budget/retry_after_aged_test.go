package budget

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRetryAfterHonestWhenSentBeforeTheWindow: a decision Call sent 10 ms
// before Redis' window starts and run there 10 ms into it (a one-way
// delay of 20 ms, the Call's age) is decided at Redis' now, its age
// reaching back past the window's start; Redis denies it while the
// previous window's units weigh. The caller waits the RetryAfter Describe
// gives from the reply and sends again over the same delay: Redis, which
// decides that Call at its send, admits it (at 4 PoPs the headroom at
// now, 2 units, is under a grant's floor, so no grant pays it). The
// mutation it catches: a
// retry counted from Redis' now while the caller counts it from its send
// (the second Call is denied again, the age too early).
func TestRetryAfterHonestWhenSentBeforeTheWindow(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	const oneWay = 20
	m, err := NewMachine(Config{PoP: "p", Incarnation: 7, Limit: core.PerWindow(1000, testWindow*time.Millisecond), PoPs: 4, FreeCredit: -1, Buckets: 4, Groups: 1})
	require.NoError(t, err)
	w := int64(3000)
	start := w * testWindow

	// one decision Call's round trip teaches the one-way delay (age.go)
	warm := start - 2000
	_, c := m.Request(warm, "warm", 1)
	require.NotNil(t, c)
	r, err := Exec(ctx, rdb, m, c, warm+oneWay)
	require.NoError(t, err)
	m.Complete(warm+2*oneWay, c, r, nil)

	writeState(t, rdb, m, "k", w-1, cgk{C: 1000, K: 4})
	writeState(t, rdb, m, "k", w, cgk{C: 500, K: 4})
	sent := start - 10
	_, c = m.Request(sent, "k", 1)
	require.NotNil(t, c, "no budget here: Redis decides")
	require.EqualValues(t, oneWay, c.age, "the Call carries the one-way delay")
	r, err = Exec(ctx, rdb, m, c, sent+oneWay)
	require.NoError(t, err)
	d := m.Complete(sent+2*oneWay, c, r, nil)
	require.False(t, d.Allowed, "the previous window full and half of this one: denied")
	wait := m.Describe(sent+2*oneWay, "k", 1, d).RetryAfter
	require.Positive(t, wait)

	again := sent + 2*oneWay + wait.Milliseconds()
	d, c = m.Request(again, "k", 1)
	require.NotNil(t, c, "after the RetryAfter Redis is asked again (got %+v)", d)
	r, err = Exec(ctx, rdb, m, c, again+oneWay)
	require.NoError(t, err)
	assert.Equal(t, int64(1), r.Items[0].Allowed, "Redis admits the Call sent at the RetryAfter (retry %d)", r.Items[0].Retry)
	d = m.Complete(again+2*oneWay, c, r, nil)
	assert.True(t, d.Allowed, "sent %d ms after the window's start, once the RetryAfter %s had passed, denied again: %+v (retry %d)",
		again-start, wait, d, r.Items[0].Retry)
}
