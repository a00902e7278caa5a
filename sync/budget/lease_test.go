package budget

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// leaseMachine is a PoP of a one-group deployment, limit 10 per window.
func leaseMachine(t *testing.T, pop string, inc uint64, credit int64, pops int) *Machine {
	t.Helper()
	m, err := NewMachine(Config{PoP: pop, Incarnation: inc, Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: pops, FreeCredit: credit})
	require.NoError(t, err)
	return m
}

// decideAt runs one request of key at m through Redis when m asks it.
func decideAt(t *testing.T, m *Machine, key string, now int64, exec func(*Machine, *Call) (*Result, error)) Decision {
	t.Helper()
	d, c := m.Request(now, key, 1)
	if c == nil {
		return d
	}
	r, err := exec(m, c)
	require.NoError(t, err)
	return m.Complete(now, c, r, err)
}

// TestReservationCountsAnnouncedSpenders: Redis reserves the free credit
// of every PoP that announced it may spend some, whatever the caller's
// Config says. PoP A runs with one unit of free credit; PoP B, configured
// differently (no free credit, or a deployment of one PoP), asks Redis for
// 20 units of an identity; then A spends its free unit. Together they
// admit at most the limit. Mutations it catches: the script reserving by
// the caller's c and PoPs alone (B is admitted the whole limit, A's free
// unit is the 11th); A spending free credit before Redis counted it (see
// TestNoFreeCreditBeforeLease).
func TestReservationCountsAnnouncedSpenders(t *testing.T) {
	rdb, _ := redistest.Client(t)
	exec := func(m *Machine, c *Call) (*Result, error) {
		return Exec(context.Background(), rdb, m, c, c.Now)
	}
	for name, b := range map[string]struct {
		credit int64
		pops   int
	}{
		"B has no free credit":   {-1, 4},
		"B believes it is alone": {1, 1},
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, rdb.FlushAll(context.Background()).Err())
			w := int64(77)
			now := w*testWindow + 10
			a := leaseMachine(t, "a", 1, 1, 4)
			pb := leaseMachine(t, "b", 2, b.credit, b.pops)
			takeLease(t, rdb, a, now)
			if b.credit > 0 {
				takeLease(t, rdb, pb, now)
			}
			admitted := 0
			for i := range 20 {
				if decideAt(t, pb, "k", now+int64(i), exec).Allowed {
					admitted++
				}
			}
			d := decideAt(t, a, "k", now+30, exec)
			if d.Allowed {
				admitted++
			}
			assert.Equal(t, SrcFree, d.Source, "A's request is its free credit, decided here")
			assert.True(t, d.Allowed, "A's free unit was reserved for it")
			assert.LessOrEqual(t, admitted, 10, "A and B together admit at most the limit")
		})
	}
}

// TestNoFreeCreditBeforeLease: a PoP spends no free credit before Redis
// has counted it among the window's spenders (its lease); its first
// request asks Redis, and that Call announces it through three windows
// ahead and gives up its slots of the window before, this window and the
// next; the next window's unit is then free, and the Sync of that window
// renews the lease one window further. Mutation it catches: credit not
// gated by the lease (the first request is free). (With PoPs 4 the
// caller's own reservation is the larger here, so the order of the
// announcement and the claims in the script is not tested by it.)
func TestNoFreeCreditBeforeLease(t *testing.T) {
	rdb, _ := redistest.Client(t)
	m := leaseMachine(t, "a", 3, 1, 4)
	w := int64(81)
	now := w*testWindow + 10
	d, c := m.Request(now, "k", 1)
	require.NotNil(t, c, "no lease yet: the request asks Redis")
	assert.Zero(t, d)
	assert.Equal(t, []int64{w - 1, w, w + 1, w + 2}, c.Items[0].Claims, "the Call gives up its slots of the window before, this one and the next two")
	assert.Equal(t, w+3, c.announce, "the Call announces this PoP through three windows ahead")
	r, err := Exec(context.Background(), rdb, m, c, now)
	require.NoError(t, err)
	assert.Equal(t, w+3, r.Leased, "Redis counted it through window w+3")
	spenders, err := rdb.HMGet(context.Background(), m.tag(0)+":fc", fmt.Sprint(w-1), fmt.Sprint(w), fmt.Sprint(w+1), fmt.Sprint(w+2), fmt.Sprint(w+3)).Result()
	require.NoError(t, err)
	one := fmt.Sprint(1<<32 + 1) // one spender, of one unit
	assert.Equal(t, []any{one, one, one, one, one}, spenders, "one spender counted in each window announced, from the one before Redis' own")
	assert.Equal(t, cgk{C: 1, K: 1}, readState(t, rdb, m, "k", w), "the unit decided, the slot given up")
	assert.Equal(t, cgk{K: 1}, readState(t, rdb, m, "k", w+1), "the next window's slot given up")
	assert.True(t, m.Complete(now, c, r, nil).Allowed)
	d, c = m.Request(now+testWindow, "k2", 1)
	assert.Nil(t, c, "the next window is leased: a new identity's unit is free")
	assert.Equal(t, Decision{Allowed: true, Source: SrcFree}, d)
	calls := m.Tick(now + testWindow)
	var announced bool
	for _, c := range calls {
		announced = announced || c.announce == w+4
	}
	assert.True(t, announced, "in window w+1 the next Sync renews the lease through w+4")
}

// TestLeasePerGroup: a PoP whose lease covers one group but not another
// (on a Redis Cluster, the other's master did not answer) spends free
// credit on the identities of the leased group only; the others ask Redis.
// Mutation it catches: credit gated by the least lease alone (no free
// unit at all).
func TestLeasePerGroup(t *testing.T) {
	m, err := NewMachine(Config{PoP: "a", Incarnation: 5, Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 4, FreeCredit: 1, Groups: 2, Buckets: 8})
	require.NoError(t, err)
	now := int64(w0 + 10)
	m.leaseTo(0, math.MinInt64, m.window(now)+2)
	require.Less(t, m.lease, m.window(now), "group 1 holds no lease")
	in := func(g int) string {
		for i := 0; ; i++ {
			if k := fmt.Sprint("k", i); m.group(m.bucket(k)) == g {
				return k
			}
		}
	}
	d, c := m.Request(now, in(0), 1)
	assert.Nil(t, c, "group 0 is leased: no call")
	assert.Equal(t, Decision{Allowed: true, Source: SrcFree}, d, "a free unit of group 0")
	_, c = m.Request(now, in(1), 1)
	require.NotNil(t, c, "group 1 is not leased: the request asks Redis")
	assert.Equal(t, 1, c.Group)
	assert.Equal(t, m.window(now)+3, c.announce, "and its Call announces this PoP to group 1")
}

// TestRedoRenewsLease: a decision Call that announced this PoP and whose
// reply was lost is sent again by the next Tick (its report must be
// applied once); the resent Call's reply carries the lease, which this
// PoP takes, so its next new identity is free. Mutation it catches: a
// resent report's reply not recording Leased (the identity asks Redis).
func TestRedoRenewsLease(t *testing.T) {
	rdb, _ := redistest.Client(t)
	m := leaseMachine(t, "a", 7, 1, 4)
	w := int64(83)
	now := w*testWindow + 10
	_, c := m.Request(now, "k", 1)
	require.NotNil(t, c, "no lease yet: the request asks Redis")
	require.Equal(t, w+3, c.announce)
	require.Positive(t, c.Seq, "the Call carries a report (its slot claims), so it is resent if lost")
	m.Complete(now+1, c, nil, errors.New("lost on the way"))
	var redo *Call
	for _, k := range m.Tick(now + 2) {
		if k.redo {
			redo = k
		}
	}
	require.NotNil(t, redo, "Tick sends the report again")
	assert.Equal(t, w+3, redo.announce, "with its announcement")
	r, err := Exec(context.Background(), rdb, m, redo, now+3)
	require.NoError(t, err)
	require.False(t, r.Retried, "the first send never reached Redis")
	require.Equal(t, w+3, r.Leased)
	m.Finish(redo, r, nil)
	d, c := m.Request(now+4, "new", 1)
	assert.Nil(t, c, "leased: a new identity's unit is free")
	assert.Equal(t, Decision{Allowed: true, Source: SrcFree}, d)
}

// TestTopUpCountsFreeCreditOnlyWithLease: far from its limit, a top-up
// asks the demand over a window less the free credit, which covers part
// of it only while the lease does: before it, the whole demand. Mutation
// it catches: subtracting Config.FreeCredit whatever the lease.
func TestTopUpCountsFreeCreditOnlyWithLease(t *testing.T) {
	m := leaseMachine(t, "a", 9, 1, 4)
	x := int64(85)
	e := m.entry("k")
	e.rate = 1.5 / float64(m.w) // 1.5 units a window: two asked (a quarter of the limit of 10)
	assert.Equal(t, int64(2), m.topUp(e, x, false), "no lease: the grant covers the whole demand")
	m.leaseTo(0, math.MinInt64, x+3)
	assert.Equal(t, int64(1), m.topUp(e, x, false), "leased: the free unit covers one")
}

// TestFirstCountWaitsWhereUnreserved: a PoP Redis counts among a window's
// free-credit spenders after decisions of that window were made without
// it spends no free credit in that window unless those decisions'
// callers reserved for it by their own configuration (lua/budget.lua,
// "The first count"); its lease then starts three windows ahead.
//   - PoPs configured as if alone (PoPs 1, one unit each, limit 10): A
//     fills an identity at Redis, then B is counted; B's lease starts at
//     w+3, its request of the identity asks Redis and is denied (A and B
//     admit 10 together, not 11), a new identity's request asks Redis too,
//     and from w+3 B's free credit is spent again.
//   - PoPs configured alike (PoPs 2): B's lease starts at once, its first
//     request of a new identity is free (no cost where the deployment is
//     configured right).
//   - A restart there: a third incarnation beside the two still counted
//     (PoPs 2, as many as the deployment's PoPs) waits too: its request
//     asks Redis.
//   - A second PoP whose FreeCredit (2) is above the checks' (1): waits.
//
// Mutations it catches: the script leaving the lease's first window where
// it was (B's free unit is the 11th); the script comparing the spenders
// alone, not the credit (the last case).
func TestFirstCountWaitsWhereUnreserved(t *testing.T) {
	rdb, _ := redistest.Client(t)
	exec := func(m *Machine, c *Call) (*Result, error) {
		return Exec(context.Background(), rdb, m, c, c.Now)
	}
	w := int64(91)
	now := w*testWindow + 10

	t.Run("configured as if alone", func(t *testing.T) {
		require.NoError(t, rdb.FlushAll(context.Background()).Err())
		a, b := leaseMachine(t, "a", 1, 1, 1), leaseMachine(t, "b", 2, 1, 1)
		takeLease(t, rdb, a, now)
		admitted := 0
		for i := range 20 {
			if decideAt(t, a, "k", now+int64(i), exec).Allowed {
				admitted++
			}
		}
		require.Equal(t, 10, admitted, "A alone is admitted the limit")
		takeLease(t, rdb, b, now+40)
		assert.Equal(t, w+3, b.groups[0].leasedFrom, "B's lease starts three windows ahead")
		assert.Equal(t, w+3, b.groups[0].leased, "and reaches as far")
		d := decideAt(t, b, "k", now+50, exec)
		assert.NotEqual(t, SrcFree, d.Source, "B's request is no free unit")
		assert.False(t, d.Allowed, "A and B admit the limit together, not one more")
		d = decideAt(t, b, "k2", now+60, exec)
		assert.Equal(t, SrcRedis, d.Source, "a new identity's request asks Redis too")
		later := now + 3*testWindow
		takeLease(t, rdb, b, later)
		d = decideAt(t, b, "k3", later+10, exec)
		assert.Equal(t, Decision{Allowed: true, Source: SrcFree}, d, "from w+3 B spends free credit")
	})

	t.Run("configured alike", func(t *testing.T) {
		require.NoError(t, rdb.FlushAll(context.Background()).Err())
		a, b := leaseMachine(t, "a", 1, 1, 2), leaseMachine(t, "b", 2, 1, 2)
		takeLease(t, rdb, a, now)
		for i := range 20 {
			decideAt(t, a, "k", now+int64(i), exec)
		}
		takeLease(t, rdb, b, now+40)
		assert.LessOrEqual(t, b.groups[0].leasedFrom, w, "B's lease covers this window")
		assert.Equal(t, Decision{Allowed: true, Source: SrcFree}, decideAt(t, b, "k2", now+50, exec), "B's first request of a new identity is free")

		a2 := leaseMachine(t, "a", 3, 1, 2) // A restarted: its first incarnation is still counted
		takeLease(t, rdb, a2, now+60)
		assert.Equal(t, w+3, a2.groups[0].leasedFrom, "a third incarnation beside two counted waits three windows")
		assert.NotEqual(t, SrcFree, decideAt(t, a2, "k4", now+70, exec).Source, "the restarted PoP's request asks Redis")
	})

	t.Run("more free credit than reserved", func(t *testing.T) {
		require.NoError(t, rdb.FlushAll(context.Background()).Err())
		a, c := leaseMachine(t, "a", 1, 1, 2), leaseMachine(t, "c", 4, 2, 2) // two PoPs counted, as configured; C's credit is 2
		takeLease(t, rdb, a, now)
		for i := range 20 {
			decideAt(t, a, "k", now+int64(i), exec)
		}
		takeLease(t, rdb, c, now+40)
		assert.Equal(t, w+3, c.groups[0].leasedFrom, "C's two units, where the checks reserved one per PoP, wait three windows")
	})
}

// TestLateRenewalKeepsCountedWindows: a renewal that newly counts a
// window a check already read without reserving for this PoP (here B's
// renewal of window w+1 was never made, and A checked w+4 at w+2) moves
// the lease's first window past it, but the windows B was counted in
// before any check read them stay its: B spends free credit in w+2 and
// w+3, not in w+4, and again from w+5. Mutation it catches: leaseTo
// replacing the lease whole (B's request in w+2 asks Redis).
func TestLateRenewalKeepsCountedWindows(t *testing.T) {
	rdb, _ := redistest.Client(t)
	exec := func(m *Machine, c *Call) (*Result, error) {
		return Exec(context.Background(), rdb, m, c, c.Now)
	}
	w := int64(91)
	at := func(x, off int64) int64 { return x*testWindow + off }
	a, b := leaseMachine(t, "a", 1, 1, 1), leaseMachine(t, "b", 2, 1, 1) // configured as if alone
	takeLease(t, rdb, a, at(w, 10))
	takeLease(t, rdb, b, at(w, 20))
	require.LessOrEqual(t, b.groups[0].leasedFrom, w, "B counted before any check")
	require.Equal(t, w+3, b.groups[0].leased)
	for i := range 5 {
		decideAt(t, a, "k", at(w, 30+int64(i)), exec)
	}
	takeLease(t, rdb, a, at(w+1, 10)) // B makes no call in w+1
	decideAt(t, a, "k2", at(w+2, 10), exec)
	decideAt(t, a, "k2", at(w+2, 11), exec) // A's checks at w+2 read w+4
	takeLease(t, rdb, b, at(w+2, 20))
	assert.Equal(t, w+5, b.groups[0].leasedFrom, "w+4 was read before B was counted there")
	for x, want := range map[int64]int64{w + 2: 1, w + 3: 1, w + 4: 0, w + 5: 1} {
		assert.Equal(t, want, b.credit(x, 0), "B's free credit in window w%+d", x-w)
	}
	assert.Equal(t, Decision{Allowed: true, Source: SrcFree}, decideAt(t, b, "k3", at(w+2, 30), exec), "B's request in w+2 is free")
}
