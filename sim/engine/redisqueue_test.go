package engine

import (
	"testing"
	"time"
)

// fill queues n placeholder Calls (take never touches them).
func fill(q *redisQueue, n int) {
	for range n {
		q.waiting = append(q.waiting, queued{at: time.Unix(0, 0)})
		q.added++
	}
}

func TestTakeBoundsAPipeline(t *testing.T) {
	q := &redisQueue{}
	fill(q, 3*maxPipeline)
	if got := len(q.take(nil)); got != maxPipeline {
		t.Fatalf("took %d Calls, want maxPipeline (%d)", got, maxPipeline)
	}
	if left := len(q.waiting) - q.head; left != 2*maxPipeline {
		t.Fatalf("%d Calls left waiting, want %d", left, 2*maxPipeline)
	}
}

func TestTakeStopsAtTheTicketTheLoopWaitsFor(t *testing.T) {
	q := &redisQueue{}
	fill(q, 50)
	q.done, q.need = 0, 7
	if got := len(q.take(nil)); got != 7 {
		t.Fatalf("took %d Calls while the loop waits for ticket 7, want 7", got)
	}
	q.done, q.need = 7, 0
	if got := len(q.take(nil)); got != 43 {
		t.Fatalf("took %d Calls with no one waiting, want the 43 left", got)
	}
	if q.head != 0 || len(q.waiting) != 0 {
		t.Fatalf("an empty queue kept head %d, %d entries", q.head, len(q.waiting))
	}
}
