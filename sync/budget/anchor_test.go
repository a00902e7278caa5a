package budget

import (
	"context"
	"errors"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fullAtRedis returns PoP "a"'s Machine, ticked at t0 (50 ms into window
// 77), and t0, once PoP "b" has spent identity k's limit of 10 at Redis:
// neither has free credit, so Redis decides every unit.
func fullAtRedis(t *testing.T, rdb *redis.Client) (*Machine, int64) {
	t.Helper()
	ctx := context.Background()
	m := leaseMachine(t, "a", 1, -1, 2)
	b := leaseMachine(t, "b", 2, -1, 2)
	t0 := int64(77)*testWindow + 50
	m.Tick(t0)
	b.Tick(t0)
	exec := func(m *Machine, c *Call) (*Result, error) { return Exec(ctx, rdb, m, c, c.Now) }
	for i := range 10 {
		require.True(t, decideAt(t, b, "k", t0+1+int64(i), exec).Allowed, "unit %d of 10", i+1)
	}
	return m, t0
}

// TestStampedAheadDenialKeepsOthersWaiting: an identity filled at Redis
// (limit 10, by PoP B's requests), then one request of it at PoP A
// stamped five windows ahead of A's clock (a caller's own time), which Redis
// decides on its clock (the PoP's, as Limiter's default runs the script
// on Redis' clock) and denies with the wait until a unit fits. An on-time
// request once that wait has passed must go to Redis, which admits it, as
// pure Redis would. Waits counted from the stamp (absorb handed Call.Now)
// denied it from the deny cache until the stamp's time plus the wait. The
// stamped caller's RetryAfter is Redis' wait (Describe reading the waits
// against the stamp told it 1 ms).
func TestStampedAheadDenialKeepsOthersWaiting(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	m, t0 := fullAtRedis(t, rdb)

	stamp := t0 + 5*testWindow
	d, c := m.Request(stamp, "k", 1)
	require.NotNil(t, c, "the stamp is past the on-time waits: Redis decides")
	sent := t0 + 30 // the PoP's clock when the call went out
	r, err := Exec(ctx, rdb, m, c, sent)
	require.NoError(t, err)
	d = m.Complete(stamp+2, c, r, err)
	require.False(t, d.Allowed, "the identity is full at Redis")
	wait := r.Items[0].Retry
	require.Positive(t, wait, "Redis says when a unit fits")
	told := m.Describe(stamp+2, "k", 1, d).RetryAfter
	assert.GreaterOrEqual(t, told, ms(wait), "the stamped caller is told Redis' wait, not the waits read against its stamp (1 ms)")
	assert.LessOrEqual(t, told, ms(testWindow), "and no more than a window")

	at := sent + wait + 1 // on time, after Redis' wait
	d, c = m.Request(at, "k", 1)
	require.NotNil(t, c, "past Redis' wait an on-time request asks Redis (deny-until %d, full until %d, Redis' wait ends at %d)",
		m.view["k"].denyUntil, m.view["k"].fullUntil, sent+wait)
	r, err = Exec(ctx, rdb, m, c, at)
	require.NoError(t, err)
	d = m.Complete(at+2, c, r, err)
	assert.Equal(t, Decision{Allowed: true, Source: SrcRedis}, d, "Redis admits it, as pure Redis would")
}

// TestStampedAheadRecoveryKeepsTheGrace: a decision Call stamped five
// windows ahead goes out, another call fails (Redis down), and the
// stamped Call's reply then lands: Redis is back, and contested
// identities stay on the fallback for the grace after it (recovered)
// on the PoP's clock. An on-time request of a contested identity after
// that grace must ask Redis. Caught mutation: the grace counted from the
// stamped reply's arrival on the stamp's timeline (the request was
// decided on the fallback until the stamp's time).
func TestStampedAheadRecoveryKeepsTheGrace(t *testing.T) {
	m := newTestMachine(t, func(c *Config) { c.FreeCredit = -1 })
	x := int64(w0 / testWindow)
	m.Tick(w0 + 50)
	_, c := m.Request(w0+100, "k", 1)
	require.NotNil(t, c)
	m.Complete(w0+110, c, &Result{Now: w0 + 105, Window: x, Items: []ItemResult{{Allowed: 1, CW: 9, Headroom: 1}}}, nil)
	require.True(t, m.contested(m.view["k"]), "k has little headroom")

	stamp := int64(w0 + 5*testWindow)
	_, cs := m.Request(stamp, "s", 1)
	require.NotNil(t, cs)
	_, cj := m.Request(w0+200, "j", 1)
	require.NotNil(t, cj)
	m.Complete(w0+210, cj, nil, errors.New("no reply"))
	require.True(t, m.Down())
	m.Complete(stamp+15, cs, &Result{Now: w0 + 215, Window: x, Items: []ItemResult{{Allowed: 1, CW: 1, Headroom: 8}}}, nil)
	require.False(t, m.Down(), "the stamped Call's reply says Redis is back")

	at := w0 + 215 + (m.cfg.SyncInterval + 2*m.cfg.RTT).Milliseconds() + 500
	d, c := m.Request(at, "k", 1)
	assert.NotNil(t, c, "past the grace on the PoP's clock k asks Redis (decided %v by %v; grace until %d)", d.Allowed, d.Source, m.graceUntil)
}

// TestLateTickRecoveryKeepsTheGrace: the Limiter's Sync loop runs no Tick
// while its batches wait on a slow Redis, so on-time requests come more
// than a Sync interval and a round trip after the last Tick. An on-time
// decision Call's reply that finds Redis back after an outage must start
// the grace at its arrival: a contested identity's on-time request within
// the grace stays on the fallback. Caught mutation: the grace counted from
// the last Tick's time plus the call's round trip, as for a stamp ahead of
// the PoP's clock (it had ended before the reply came).
func TestLateTickRecoveryKeepsTheGrace(t *testing.T) {
	m := newTestMachine(t, func(c *Config) { c.FreeCredit = -1 })
	x := int64(w0 / testWindow)
	m.Tick(w0 + 50)
	_, c := m.Request(w0+100, "k", 1)
	require.NotNil(t, c)
	m.Complete(w0+110, c, &Result{Now: w0 + 105, Window: x, Items: []ItemResult{{Allowed: 1, CW: 9, Headroom: 1}}}, nil)
	require.True(t, m.contested(m.view["k"]), "k has little headroom")

	// no Tick since w0+50: the Sync loop's batch is still at a slow Redis
	_, cs := m.Request(w0+400, "s", 1)
	require.NotNil(t, cs)
	_, cj := m.Request(w0+390, "j", 1)
	require.NotNil(t, cj)
	m.Complete(w0+410, cj, nil, errors.New("no reply"))
	require.True(t, m.Down())
	m.Complete(w0+420, cs, &Result{Now: w0 + 415, Window: x, Items: []ItemResult{{Allowed: 1, CW: 1, Headroom: 8}}}, nil)
	require.False(t, m.Down(), "the on-time Call's reply says Redis is back")

	d, c := m.Request(w0+450, "k", 1)
	assert.Nil(t, c, "within the grace after the reply at w0+420, k stays on the fallback (grace until %d, w0 = %d)", m.graceUntil, int64(w0))
	assert.Equal(t, SrcFallback, d.Source)
}

// TestLateTickDenyCacheRetryAfter: an identity denied from the deny cache
// by an on-time request, the last Tick more than a Sync interval and a
// round trip before it (the Limiter's Sync waiting on a slow Redis), is
// told the deny cache's wait from its own time. Caught mutation: Describe
// reading every wait from the last Tick's time when the request is that
// far past it (the Retry-After grew by the time since that Tick).
func TestLateTickDenyCacheRetryAfter(t *testing.T) {
	m := newTestMachine(t, func(c *Config) { c.FreeCredit = -1 })
	x := int64(w0 / testWindow)
	m.Tick(w0 + 50)
	_, c := m.Request(w0+100, "k", 1)
	require.NotNil(t, c)
	d := m.Complete(w0+110, c, &Result{Now: w0 + 105, Window: x, Items: []ItemResult{{Allowed: 0, CW: 10, Retry: 5000}}}, nil)
	require.False(t, d.Allowed)
	e := m.view["k"]
	until := max(e.denyUntil, e.fullUntil, e.retryAt)
	require.Greater(t, until, int64(w0+2000), "k waits seconds")

	at := int64(w0 + 1050) // on time; no Tick since w0+50
	d, c = m.Request(at, "k", 1)
	require.Nil(t, c)
	require.False(t, d.Allowed)
	told := m.Describe(at, "k", 1, d).RetryAfter
	view := core.SlidingRetryMillis(10, 0, at-x*testWindow, testWindow, 10, 1) // core's on the view's counts
	assert.Equal(t, ms(max(until-at, view)), told, "the wait from the request's time (source %v)", d.Source)
}

// TestClockKeepsOnTimeWaits: a PoP's last Tick is late (five seconds: a
// Limiter's Sync runs none while its batches wait on a slow Redis), an
// identity is full at Redis, and an on-time request of it here is denied
// by Redis with the wait until a unit fits. With the driver's Clock read
// before each request (as Limiter and pop-sim do), the deny cache holds
// the identity's next request until the request's time plus that wait, as
// it would after a timely Tick. Caught mutations: sentAt reading the last
// Tick's time alone, or Clock not recording (the request looked stamped
// ahead of the Tick, its waits counted from it and ended five seconds
// early: the next request went to Redis for a denial).
func TestClockKeepsOnTimeWaits(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	m, t0 := fullAtRedis(t, rdb)
	now := t0 + 5000 // on time; the last Tick five seconds back
	m.Clock(now)
	d, c := m.Request(now, "k", 1)
	require.NotNil(t, c, "Redis decides")
	r, err := Exec(ctx, rdb, m, c, now)
	require.NoError(t, err)
	d = m.Complete(now+2, c, r, err)
	require.False(t, d.Allowed, "the identity is full at Redis")
	wait := r.Items[0].Retry
	require.Greater(t, wait, int64(2000), "Redis' wait is long enough to tell the anchors apart")

	later := now + wait - 1000 // within Redis' wait from the request
	m.Clock(later)
	d, c = m.Request(later, "k", 1)
	assert.Nil(t, c, "within Redis' wait the deny cache holds the identity (deny-until %d, full until %d; Redis' wait ends at %d)",
		m.view["k"].denyUntil, m.view["k"].fullUntil, now+wait)
	assert.False(t, d.Allowed)
}

// TestHungBatchRecoveryKeepsTheGrace: a Sync batch sent just before Redis
// stalls (a fork, a paused failover) waits through the outage while the
// PoP's decision Calls fail and it decides contested identities on the
// fallback; then the stalled Redis runs the batch and its reply is the one
// that finds Redis back. The grace after the outage must count from that
// reply's arrival, which the driver reads into Clock before Finish (as
// Limiter's Sync and pop-sim do): a contested identity's request just
// after it stays on the fallback while the other PoPs' reports of their
// outage admissions land. Caught mutation: Finish starting the grace at
// the batch's send time (Call.Now), which ended it seconds before the
// reply came, so the request went to Redis at once.
func TestHungBatchRecoveryKeepsTheGrace(t *testing.T) {
	m := newTestMachine(t, func(c *Config) { c.FreeCredit = -1 })
	x := int64(w0 / testWindow)
	m.Tick(w0 + 50)
	_, c := m.Request(w0+100, "k", 1)
	require.NotNil(t, c)
	m.Complete(w0+110, c, &Result{Now: w0 + 105, Window: x, Items: []ItemResult{{Allowed: 1, CW: 9, Headroom: 1}}}, nil)
	require.True(t, m.contested(m.view["k"]), "k has little headroom")

	m.Clock(w0 + 150)
	batches := m.Tick(w0 + 150) // reports k's unit
	require.Len(t, batches, 1)
	_, cj := m.Request(w0+300, "j", 1)
	require.NotNil(t, cj)
	m.Complete(w0+1300, cj, nil, errors.New("no reply"))
	require.True(t, m.Down())

	arrival := int64(w0 + 5000) // the stalled batch's reply, seconds later
	m.Clock(arrival)
	m.Finish(batches[0], &Result{Now: arrival - 10, Window: x, Items: []ItemResult{{Allowed: -1, CW: 9, Headroom: 1}}}, nil)
	require.False(t, m.Down(), "the batch's reply says Redis is back")

	d, ck := m.Request(arrival+30, "k", 1)
	assert.Nil(t, ck, "within the grace after the reply at %d, k stays on the fallback (grace until %d)", arrival, m.graceUntil)
	assert.Equal(t, SrcFallback, d.Source)
}
