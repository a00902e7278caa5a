package engine

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAgendaRunsEventsByTimeKindThenSchedulingOrder(t *testing.T) {
	var a agenda
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		a.add(event{at: time.Duration(r.IntN(50)), kind: r.IntN(evTick + 1)})
	}
	var prev *entry
	n := 0
	for {
		ev, ok := a.next(40)
		if !ok {
			break
		}
		require.False(t, ev.at > 40, "event at %v returned by next(40)", ev.at)
		key := &entry{at: ev.at, order: uint64(ev.kind)<<kindShift | ev.seq}
		if prev != nil {
			require.False(t, before(key, prev), "event %+v came after %+v, which it runs before", ev, *prev)
		}
		prev = key
		n++
	}
	for range a.len() {
		ev, _ := a.next(1 << 40)
		require.False(t, ev.at <= 40, "event at %v left behind by next(40)", ev.at)
	}
	require.False(t, n == 0 || a.len() != 0, "ran %d events by 40, %d left", n, a.len())
}

// TestAgendaReusesPlacesInOrder interleaves scheduling and running, as the
// loop does, so that freed places of the slab are reused, and checks every
// event comes out whole and in the order of a sort by (at, kind, seq).
func TestAgendaReusesPlacesInOrder(t *testing.T) {
	var a agenda
	r := rand.New(rand.NewPCG(3, 4))
	var want []event // scheduled, not yet run
	now := time.Duration(0)
	for step := range 20000 {
		if r.IntN(3) > 0 {
			ev := event{at: now + time.Duration(r.IntN(30)), kind: r.IntN(evTick + 1), pop: step, req: step}
			a.add(ev)
			ev.seq = a.seq
			want = append(want, ev)
			continue
		}
		now += time.Duration(r.IntN(3))
		slices.SortFunc(want, func(x, y event) int {
			return cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(x.kind, y.kind), cmp.Compare(x.seq, y.seq))
		})
		for len(want) > 0 && want[0].at <= now {
			got, ok := a.next(now)
			require.True(t, ok, "step %d: next found nothing; want %+v", step, want[0])
			require.Equal(t, want[0], got, "step %d: next", step)
			want = want[1:]
		}
		_, ok := a.next(now)
		require.False(t, ok, "step %d: an event past %v came out", step, now)
	}
	require.False(t, len(a.events) > 2*a.len()+100, "slab of %d places for %d events: freed places not reused", len(a.events), a.len())
}
