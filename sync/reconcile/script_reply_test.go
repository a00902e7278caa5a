package reconcile

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestScriptRepliesAreHGETALL drives random Decide (transient and not) and
// Flush calls of three PoPs on a real Redis and checks every reply against
// Redis and against a Go model of the merge-by-max semantics: each
// Result's fields are, in order, what HGETALL returns right after the call
// (the scripts build them without reading the hash back), and the priors,
// the fields and every admission are the model's (hashes keep insertion
// order; a merge or an admission raises a field in place or appends it).
func TestScriptRepliesAreHGETALL(t *testing.T) {
	proc := redistest.Start(t)
	rdb := proc.Client()
	// RESP2: HGETALL as a list in the hash's order.
	raw := redis.NewClient(&redis.Options{Addr: proc.Addr, Protocol: 2})
	t.Cleanup(func() { rdb.Close(); raw.Close() })
	ctx := context.Background()
	const ns, window = "el", time.Second
	ids := []string{"A#00000001", "B#00000002", "C#00000003"}
	stores := map[string]*Store{}
	for _, id := range ids {
		stores[id] = New(rdb, ns, id, window)
	}
	r := rand.New(rand.NewPCG(7, 7))
	m := model{}
	calls, admitted := 3000, 0
	if testing.Short() {
		calls = 500
	}
	for i := 0; i < calls; i++ {
		id := ids[r.IntN(len(ids))]
		ident := fmt.Sprintf("u%d", r.IntN(3))
		idx := int64(1 + i/300 + r.IntN(2)) // the windows move on
		own := [2]int64{int64(r.IntN(12)), int64(r.IntN(12))}
		if r.IntN(4) == 0 {
			own[0] = 0 // nothing of its own yet: an admission appends the field
		}
		where := fmt.Sprintf("call %d by %s", i, id)
		if r.IntN(3) == 0 {
			items := []Item{{Key: ident, Index: idx, Own: own}}
			if r.IntN(3) == 0 { // the same identity's next window too
				items = append(items, Item{Key: ident, Index: idx + 1, Own: [2]int64{int64(r.IntN(12)), own[0]}})
			}
			res, err := stores[id].Flush(ctx, items)
			require.NoError(t, err, "%s", where)
			wants := make([]Result, len(items))
			for j, it := range items {
				wants[j] = m.flush(id, ns, it)
			}
			for j, it := range items {
				// A window the next item names again is compared with the
				// model only: Redis holds what came after.
				live := [2]bool{true, j+1 == len(items)}
				checkResult(t, ctx, raw, ns, it, res[j], wants[j], live, where)
			}
			continue
		}
		a := DecideArgs{Item: Item{Key: ident, Index: idx, Own: own}, N: int64(1 + r.IntN(3)),
			Max: int64(10 + r.IntN(80)), Elapsed: int64(r.IntN(1000)), WindowMillis: window.Milliseconds(),
			Transient: r.IntN(2) == 0}
		for _, p := range ids {
			if p != id && r.IntN(3) > 0 {
				a.Peers = append(a.Peers, Peer{ID: p, Counts: [2]int64{int64(r.IntN(12)), int64(r.IntN(12))}})
			}
		}
		ok, res, err := stores[id].Decide(ctx, a)
		require.NoError(t, err, "%s", where)
		wantOK, want := m.decide(id, ns, a)
		require.Equal(t, wantOK, ok, "%s: admitted %v, model %v (%+v)", where, ok, wantOK, a)
		if ok {
			admitted++
		}
		checkResult(t, ctx, raw, ns, a.Item, res, want, [2]bool{true, true}, where)
	}
	require.NotEqual(t, 0, admitted, "%d admissions in %d calls: the test decides nothing", admitted, calls)
	require.NotEqual(t, calls, admitted, "%d admissions in %d calls: the test decides nothing", admitted, calls)
	t.Logf("%d calls, %d admissions", calls, admitted)
}

// checkResult requires res to be want, and each live window's fields to
// be HGETALL of its hash, in order, with a TTL of about two windows once
// written.
func checkResult(t *testing.T, ctx context.Context, raw *redis.Client, ns string, it Item, res, want Result, live [2]bool, where string) {
	t.Helper()
	for w := 0; w < 2; w++ {
		k := Key(ns, it.Key, it.Index-int64(w))
		require.Equal(t, want.Prior[w], res.Prior[w], "%s: %s: prior %d fields %v, model %d %v", where, k, res.Prior[w], res.Fields[w], want.Prior[w], want.Fields[w])
		require.True(t, slices.Equal(res.Fields[w], want.Fields[w]), "%s: %s: prior %d fields %v, model %d %v", where, k, res.Prior[w], res.Fields[w], want.Prior[w], want.Fields[w])
		require.Equal(t, want.Total(w), res.Total(w), "%s: %s: prior %d fields %v, model %d %v", where, k, res.Prior[w], res.Fields[w], want.Prior[w], want.Fields[w])
		if !live[w] {
			continue
		}
		v, err := raw.Do(ctx, "HGETALL", k).Slice()
		require.NoError(t, err, "%s: HGETALL %s", where, k)
		_, stored, err := parsePair(int64(0), v)
		require.NoError(t, err)
		require.True(t, slices.Equal(res.Fields[w], stored), "%s: %s: reply %v, HGETALL %v", where, k, res.Fields[w], stored)
		ttl := raw.PTTL(ctx, k).Val()
		if len(stored) > 0 {
			require.Positive(t, ttl, "%s: %s TTL %v", where, k, ttl)
			require.LessOrEqual(t, ttl, 2*time.Second, "%s: %s TTL %v", where, k, ttl)
		}
	}
}

// model is what the hashes hold: per key, the fields in insertion order.
type model map[string][]Field

// merge raises k's field id to c when c is higher (appending a new field)
// and returns the field's count before.
func (m model) merge(k, id string, c int64) int64 {
	i := slices.IndexFunc(m[k], func(f Field) bool { return f.ID == id })
	if i < 0 {
		if c > 0 {
			m[k] = append(m[k], Field{id, c})
		}
		return 0
	}
	old := m[k][i].Count
	m[k][i].Count = max(old, c)
	return old
}

func (m model) get(k, id string) int64 {
	for _, f := range m[k] {
		if f.ID == id {
			return f.Count
		}
	}
	return 0
}

func (m model) result(keys [2]string, prior [2]int64) Result {
	return Result{Prior: prior, Fields: [2][]Field{slices.Clone(m[keys[0]]), slices.Clone(m[keys[1]])}}
}

func (m model) flush(id, ns string, it Item) Result {
	keys := [2]string{Key(ns, it.Key, it.Index), Key(ns, it.Key, it.Index-1)}
	var prior [2]int64
	for w, k := range keys {
		prior[w] = m.merge(k, id, it.Own[w])
	}
	return m.result(keys, prior)
}

// decide is hybrid_decide.lua's decision: the own counts merged, the
// peers' merged or (Transient) only weighed, the estimate as
// core.SlidingEstimate computes it.
func (m model) decide(id, ns string, a DecideArgs) (bool, Result) {
	keys := [2]string{Key(ns, a.Key, a.Index), Key(ns, a.Key, a.Index-1)}
	var prior, extra, total [2]int64
	for w, k := range keys {
		prior[w] = m.merge(k, id, a.Own[w])
	}
	for _, p := range a.Peers {
		for w, k := range keys {
			if !a.Transient {
				m.merge(k, p.ID, p.Counts[w])
			} else if old := m.get(k, p.ID); p.Counts[w] > old {
				extra[w] += p.Counts[w] - old
			}
		}
	}
	for w, k := range keys {
		for _, f := range m[k] {
			total[w] += f.Count
		}
		total[w] += extra[w]
	}
	est := float64(total[0]) + float64(total[1])*float64(a.WindowMillis-a.Elapsed)/float64(a.WindowMillis)
	ok := est < float64(a.Max-a.N+1)
	if ok {
		m.merge(keys[0], id, m.get(keys[0], id)+a.N)
	}
	return ok, m.result(keys, prior)
}
