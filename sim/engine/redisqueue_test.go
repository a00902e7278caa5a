package engine

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// newTestQueue is a queue with n lanes and no goroutine: the tests call
// take and finish themselves (neither touches a Call).
func newTestQueue(n int) *redisQueue {
	q := &redisQueue{lanes: make([]lane, n)}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// tickets lists the tickets of batch.
func tickets(batch []queued) []uint64 {
	var ts []uint64
	for _, b := range batch {
		ts = append(ts, b.ticket)
	}
	return ts
}

func TestTakeBoundsAPipeline(t *testing.T) {
	q := newTestQueue(1)
	for range 3 * maxPipeline {
		q.add(nil, time.Unix(0, 0), 0)
	}
	got := len(q.take(0, nil))
	require.EqualValues(t, maxPipeline, got, "took %d Calls, want maxPipeline (%d)", got, maxPipeline)
}

func TestTakeStopsAtTheTicketTheLoopWaitsFor(t *testing.T) {
	q := newTestQueue(1)
	for range 50 {
		q.add(nil, time.Unix(0, 0), 0)
	}
	q.need = 7
	b := q.take(0, nil)
	got := tickets(b)
	require.True(t, slices.Equal(got, []uint64{1, 2, 3, 4, 5, 6, 7}), "took %v while the loop waits for ticket 7, want 1..7", got)
	q.finish(b)
	q.need = 0
	require.EqualValues(t, 7, q.done, "done %d after tickets 1..7 ran, want 7", q.done)
	left := len(q.take(0, nil))
	require.EqualValues(t, 43, left, "took %d Calls with no one waiting, want the 43 left", left)
}

func TestLanesSplitByIdentityAndABatchIsABarrier(t *testing.T) {
	q := newTestQueue(2)
	at := time.Unix(0, 0)
	q.add(nil, at, 0)  // 1: lane 0
	q.add(nil, at, 1)  // 2: lane 1
	q.add(nil, at, -1) // 3: a batch
	q.add(nil, at, 1)  // 4: lane 1, after the batch
	q.add(nil, at, 0)  // 5: lane 0, after the batch
	zero, one := q.take(0, nil), q.take(1, nil)
	require.Equal(t, []uint64{1}, tickets(zero), "lane 0 took, want [1]")
	require.Equal(t, []uint64{2}, tickets(one), "lane 1 took, want [2]")
	q.finish(zero)
	b := q.take(0, nil)
	require.False(t, len(b) > 0, "lane 0 took %v before ticket 2 ran", tickets(b))
	q.finish(one)
	b = q.take(1, nil)
	require.False(t, len(b) > 0, "lane 1 took %v before the batch ran", tickets(b))
	barrier := q.take(0, nil)
	require.Equal(t, []uint64{3}, tickets(barrier), "lane 0 took, once 1 and 2 ran: want the batch [3] alone")
	q.finish(barrier)
	zero, one = q.take(0, nil), q.take(1, nil)
	require.Equal(t, []uint64{5}, tickets(zero), "after the batch lane 0 took, want [5]")
	require.Equal(t, []uint64{4}, tickets(one), "after the batch lane 1 took, want [4]")
	q.finish(zero)
	require.EqualValues(t, 3, q.done, "done %d with ticket 4 still out, want 3", q.done)
	q.finish(one)
	require.EqualValues(t, 5, q.done, "done %d once all ran, want 5", q.done)
}
