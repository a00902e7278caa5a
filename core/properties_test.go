package core

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestRetryAfterIsExact: when a request is denied, the same request is
// admitted once RetryAfter has elapsed and still denied one millisecond
// before, for every algorithm over random states, limits and weights.
func TestRetryAfterIsExact(t *testing.T) {
	forRandomStates(t, false, checkRetryAfter)
}

// TestRetryAfterClockWentBack: the same property when the state was written
// by a clock ahead of now (now is up to a window behind the state).
func TestRetryAfterClockWentBack(t *testing.T) {
	forRandomStates(t, true, checkRetryAfter)
}

// TestRemainingIsExact: Remaining single units pass right after the
// decision, and one more does not.
func TestRemainingIsExact(t *testing.T) {
	forRandomStates(t, false, checkRemaining)
}

// TestResetAfterIsExact: at now+ResetAfter the state is empty (full quota,
// ResetAfter 0); one millisecond before it is not.
func TestResetAfterIsExact(t *testing.T) {
	forRandomStates(t, false, checkResetAfter)
}

func forRandomStates(t *testing.T, back bool, check func(t *testing.T, s anyState, l Limit, now, n int64)) {
	for _, a := range Algorithms {
		t.Run(a.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(a)+1, 42))
			for i := 0; i < propertyRuns; i++ {
				l := randLimit(r, a)
				now := t0 + r.Int64N(10*l.WindowMillis())
				n := 1 + r.Int64N(l.Max)
				if r.IntN(2) == 0 {
					n = 1
				}
				check(t, randState(r, l, now, back), l, now, n)
				if t.Failed() {
					return
				}
			}
		})
	}
}

func checkRetryAfter(t *testing.T, s anyState, l Limit, now, n int64) {
	d := s.peekAt(l, now, n)
	if d.Allowed {
		assert.Equal(t, time.Duration(0), d.RetryAfter, "%v state %+v now %d n %d: allowed with RetryAfter %v", l, s, now, n, d.RetryAfter)
		return
	}
	ra := d.RetryAfter.Milliseconds()
	if !assert.True(t, ra >= 1 && d.RetryAfter%time.Millisecond == 0, "%v state %+v now %d n %d: denied with RetryAfter %v, want a whole number of ms, at least 1", l, s, now, n, d.RetryAfter) {
		return
	}
	assert.True(t, s.peekAt(l, now+ra, n).Allowed, "%v state %+v now %d n %d: still denied after RetryAfter %dms", l, s, now, n, ra)
	assert.False(t, s.peekAt(l, now+ra-1, n).Allowed, "%v state %+v now %d n %d: admitted 1ms before RetryAfter %dms", l, s, now, n, ra)
}

func checkRemaining(t *testing.T, s anyState, l Limit, now, n int64) {
	c := s.clone()
	d := c.decide(l, now, n, true)
	if !assert.True(t, d.Remaining >= 0 && d.Remaining <= l.Max, "%v state %+v now %d: Remaining %d out of range [0, %d]", l, s, now, d.Remaining, l.Max) {
		return
	}
	for k := int64(0); k < d.Remaining; k++ {
		if !assert.True(t, c.decide(l, now, 1, true).Allowed, "%v state %+v now %d n %d: Remaining %d but unit %d denied", l, s, now, n, d.Remaining, k+1) {
			return
		}
	}
	assert.False(t, c.decide(l, now, 1, true).Allowed, "%v state %+v now %d n %d: Remaining %d but one more unit admitted", l, s, now, n, d.Remaining)
}

func checkResetAfter(t *testing.T, s anyState, l Limit, now, n int64) {
	c := s.clone()
	d := c.decide(l, now, n, true)
	ra := d.ResetAfter.Milliseconds()
	if !assert.True(t, ra >= 0 && d.ResetAfter%time.Millisecond == 0, "%v: ResetAfter %v, want a whole number of ms, not negative", l, d.ResetAfter) {
		return
	}
	at := c.peekAt(l, now+ra, 1)
	if assert.Equal(t, l.Max, at.Remaining, "%v state %+v now %d n %d: at ResetAfter %dms got %+v, want an empty state", l, s, now, n, ra, at) {
		assert.Equal(t, time.Duration(0), at.ResetAfter, "%v state %+v now %d n %d: at ResetAfter %dms got %+v, want an empty state", l, s, now, n, ra, at)
	}
	if ra > 0 {
		before := c.peekAt(l, now+ra-1, 1)
		assert.NotEqual(t, time.Duration(0), before.ResetAfter, "%v state %+v now %d n %d: empty already 1ms before ResetAfter %dms", l, s, now, n, ra)
	}
}

// TestRemainingClockWentBack and TestResetAfterClockWentBack: the same
// properties when now lies before the state's window.
func TestRemainingClockWentBack(t *testing.T) { forRandomStates(t, true, checkRemaining) }

func TestResetAfterClockWentBack(t *testing.T) { forRandomStates(t, true, checkResetAfter) }
