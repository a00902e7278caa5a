package engine

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestAgendaRunsEventsByTimeKindThenSchedulingOrder(t *testing.T) {
	var a agenda
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		a.add(event{at: time.Duration(r.IntN(50)), kind: r.IntN(evTick + 1)})
	}
	var prev *event
	n := 0
	for {
		ev, ok := a.next(40)
		if !ok {
			break
		}
		if ev.at > 40 {
			t.Fatalf("event at %v returned by next(40)", ev.at)
		}
		if prev != nil && before(&ev, prev) {
			t.Fatalf("event %+v came after %+v, which it runs before", ev, *prev)
		}
		prev = &ev
		n++
	}
	for range len(a.items) {
		if ev, _ := a.next(1 << 40); ev.at <= 40 {
			t.Fatalf("event at %v left behind by next(40)", ev.at)
		}
	}
	if n == 0 || len(a.items) != 0 {
		t.Fatalf("ran %d events by 40, %d left", n, len(a.items))
	}
}
