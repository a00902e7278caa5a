package budget

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// scriptUsec is the server's INFO commandstats time (µs) and count of
// EVALSHA and EVAL since the last CONFIG RESETSTAT.
func scriptUsec(tb testing.TB, rdb *redis.Client) (usec, calls int64) {
	tb.Helper()
	calls, usec = redistest.CommandStats(tb, rdb, "evalsha", "eval")
	return usec, calls
}

func resetStats(tb testing.TB, rdb *redis.Client) {
	tb.Helper()
	require.NoError(tb, rdb.ConfigResetStat(context.Background()).Err(), "CONFIG RESETSTAT")
}

// benchGrant is what a benchmark PoP holds of an identity's grant.
type benchGrant struct{ gw, bal int64 }

// BenchmarkScriptCost measures the budget script's server time (INFO
// commandstats, EVALSHA) on Sync batches like a deployment's: 8 PoPs, 4
// groups, 8,000 identities of which 400 are contested, every PoP sending
// each group a batch of 100 items every 500 ms of its clock for 30
// rounds (across a window boundary): 40% of the items are contested ones
// that spend their grant, give up the slots of w and w+1 and want more,
// the rest calm ones that report one free unit a window and now and then
// want a little. Then 30 rounds of batches of 6 items (a pop-sim Sync
// carries about that many), then 2,000 decisions (one item, N = 1, want
// 2) on contested identities; then, in the same run, the sliding window
// script of backends/redis (one decision per call) on 5,000 identities
// as the baseline. Sub-benchmarks: "reference" (testdata/budget_ref.lua,
// the script as first written) and "current".
//
// Metrics: µs per item and per call of each kind, and against the sliding
// decision (x-sliding). µs are the script's wall time as the server counts
// it (what pop-sim's "script µs/dec" reports): on shared cores it moves
// with the load, so compare runs by their least figures over -count runs.
// The replies' digest is logged: a change of the script that keeps its
// semantics keeps it.
func BenchmarkScriptCost(b *testing.B) {
	rdb, _ := redistest.Client(b)
	ctx := context.Background()
	ref := refScript(b)
	require.NoError(b, ref.Load(ctx, rdb).Err(), "SCRIPT LOAD reference")
	b.Run("reference", func(b *testing.B) {
		benchScript(b, rdb, func(m *Machine, c *Call, now int64) (*Result, error) { return execRef(ctx, rdb, ref, m, c, now) })
	})
	b.Run("current", func(b *testing.B) {
		benchScript(b, rdb, func(m *Machine, c *Call, now int64) (*Result, error) { return Exec(ctx, rdb, m, c, now) })
	})
}

func benchScript(b *testing.B, rdb *redis.Client, exec func(*Machine, *Call, int64) (*Result, error)) {
	ctx := context.Background()
	const pops, groups, ids, hotIDs, batch, rounds = 8, 4, 8000, 400, 100, 30
	const window = 10_000
	sliding := redis.NewScript(mustSource("sliding"))
	require.NoError(b, script.Load(ctx, rdb).Err(), "SCRIPT LOAD budget")
	require.NoError(b, sliding.Load(ctx, rdb).Err(), "SCRIPT LOAD sliding")
	for b.Loop() {
		require.NoError(b, rdb.FlushDB(ctx).Err())
		rng := rand.New(rand.NewPCG(1, 1))
		digest := fnv.New64a()
		ms := make([]*Machine, pops)
		for p := range ms {
			m, err := NewMachine(Config{PoP: strconv.Itoa(p), Incarnation: uint64(p + 1), Limit: core.PerWindow(100, window*time.Millisecond),
				PoPs: pops, Buckets: ids / 100, Groups: groups})
			require.NoError(b, err)
			ms[p] = m
		}
		byGroup := make([][]string, groups)
		var hot []string
		for i := range ids {
			k := "id" + strconv.Itoa(i)
			g := ms[0].group(ms[0].bucket(k))
			byGroup[g] = append(byGroup[g], k)
		}
		for g := range byGroup {
			hot = append(hot, byGroup[g][:hotIDs/groups]...)
		}
		grants := make([]map[string]benchGrant, pops)
		freeUsed := make([]map[string]int64, pops) // last window whose free unit a PoP reported
		for p := range pops {
			grants[p], freeUsed[p] = map[string]benchGrant{}, map[string]int64{}
		}
		seq := make([]uint64, pops)
		// checked[p][g] is how far Redis recorded PoP p's checks on group
		// g, as a Machine keeps it (groupState.checkedTo): its calls
		// carry it, so a call of a window already recorded records none
		checked := make([][]int64, pops)
		for p := range checked {
			checked[p] = make([]int64, groups)
		}
		start := int64(5000)*window + 2000
		// syncs runs rounds of batches of batch items per PoP and group,
		// from round r0 on, and returns their server µs, items and calls.
		syncs := func(r0, batch int) (usec, items, calls int64) {
			resetStats(b, rdb)
			for r := r0; r < r0+rounds; r++ {
				for p, m := range ms {
					now := start + int64(r)*500 + int64(p)*7
					w := now / window
					seq[p]++
					for g := range groups {
						c := &Call{Group: g, Seq: seq[p], recorded: checked[p][g]}
						for j := range batch {
							var k string
							it := Item{}
							if j < batch*2/5 {
								k = byGroup[g][rng.IntN(hotIDs/groups)]
								it.Claims = []int64{w, w + 1}
								it.Want = 1 + rng.Int64N(4)
								if gr := grants[p][k]; gr.bal > 0 {
									u := min(gr.bal, 1+rng.Int64N(3))
									it.Ops = append(it.Ops, Op{X: w, GW: gr.gw, U: u})
									grants[p][k] = benchGrant{gr.gw, gr.bal - u}
								}
							} else {
								k = byGroup[g][hotIDs/groups+rng.IntN(len(byGroup[g])-hotIDs/groups)]
								if freeUsed[p][k] < w {
									freeUsed[p][k] = w
									it.Ops = []Op{{X: w, GW: GWFree, U: 1}}
								} else {
									it.Want = rng.Int64N(3)
								}
							}
							it.Key, it.Bucket = k, m.bucket(k)
							c.Items = append(c.Items, it)
						}
						res, err := exec(m, c, now)
						require.NoError(b, err, "batch of PoP %d group %d round %d", p, g, r)
						checked[p][g] = res.Window + 2
						for j, ir := range res.Items {
							if ir.Grant > 0 {
								k := c.Items[j].Key
								grants[p][k] = benchGrant{res.Window, grants[p][k].bal + ir.Grant}
							}
							digestItem(digest, ir)
						}
						items += int64(len(c.Items))
						calls++
					}
				}
			}
			usec, n := scriptUsec(b, rdb)
			require.Equal(b, calls, n, "one EVALSHA per batch")
			return usec, items, calls
		}
		batchUsec, items, calls := syncs(0, 100)
		smallUsec, smallItems, smallCalls := syncs(rounds, 6)

		resetStats(b, rdb)
		const decisions = 2000
		for d := range decisions {
			p := d % pops
			now := start + int64(2*rounds)*500 + int64(d)
			k := hot[rng.IntN(len(hot))]
			g := ms[p].group(ms[p].bucket(k))
			res, err := exec(ms[p], &Call{Group: g, Items: []Item{{Key: k, Bucket: ms[p].bucket(k), N: 1, Want: 2}}, recorded: checked[p][g]}, now)
			require.NoError(b, err, "decision %d", d)
			checked[p][g] = res.Window + 2
			digestItem(digest, res.Items[0])
		}
		decUsec, decCalls := scriptUsec(b, rdb)
		require.Equal(b, int64(decisions), decCalls, "one EVALSHA per decision")

		resetStats(b, rdb)
		const slidingN = 5000
		for d := range slidingN {
			now := start + int64(d)
			_, err := sliding.Run(ctx, rdb, []string{"sl:id" + strconv.Itoa(d%ids)}, now, window, 100, 1, 1, 0, 1000).Slice()
			require.NoError(b, err, "sliding decision %d", d)
		}
		slUsec, slCalls := scriptUsec(b, rdb)
		require.Equal(b, int64(slidingN), slCalls, "one EVALSHA per sliding decision")

		perSliding := float64(slUsec) / slidingN
		perItem := float64(batchUsec) / float64(items)
		perSmallItem := float64(smallUsec) / float64(smallItems)
		perDec := float64(decUsec) / decisions
		b.ReportMetric(perItem, "µs/item")
		b.ReportMetric(float64(batchUsec)/float64(calls), "µs/batch")
		b.ReportMetric(perSmallItem, "µs/item-small")
		b.ReportMetric(float64(smallUsec)/float64(smallCalls), "µs/batch-small")
		b.ReportMetric(perDec, "µs/decision")
		b.ReportMetric(perSliding, "µs/sliding")
		b.ReportMetric(perItem/perSliding, "item-x-sliding")
		b.ReportMetric(perSmallItem/perSliding, "item-small-x-sliding")
		b.ReportMetric(perDec/perSliding, "decision-x-sliding")
		b.Logf("%d batches of %d items, %d of %d, %d decisions; replies digest %016x", calls, items, smallCalls, smallItems, decisions, digest.Sum64())
	}
}

func digestItem(h interface{ Write([]byte) (int, error) }, r ItemResult) {
	for _, v := range []int64{r.Allowed, r.Grant, r.CW, r.CPrev, r.Headroom, r.Retry} {
		h.Write(strconv.AppendInt(nil, v, 10))
		h.Write([]byte{','})
	}
}

// BenchmarkRecordCost measures what the first count costs a decision Call
// (lua/budget.lua, "The first count"): alternating blocks of 1,000
// decision Calls by 8 PoPs on 400 identities, the same calls each time,
// one block with the Calls saying their checks of the window are recorded
// (Call.recorded = w+2: one HMGET of four fields, as every Call but a
// PoP's first of a window and group), the next not (eight fields, and
// the records compared; written only when lowered, which after the first
// block they are not). Metrics: µs of script time per Call of each
// (recorded, unrecorded) and their ratio, over 6 blocks of each; the
// blocks alternate so both see the same load on shared cores.
func BenchmarkRecordCost(b *testing.B) {
	rdb, _ := redistest.Client(b)
	ctx := context.Background()
	require.NoError(b, script.Load(ctx, rdb).Err(), "SCRIPT LOAD budget")
	const window, pops, ids, block = 10_000, 8, 400, 1000
	ms := make([]*Machine, pops)
	for p := range ms {
		m, err := NewMachine(Config{PoP: strconv.Itoa(p), Incarnation: uint64(p + 1), Limit: core.PerWindow(100, window*time.Millisecond),
			PoPs: pops, Buckets: ids / 100, Groups: 4})
		require.NoError(b, err)
		ms[p] = m
	}
	start := int64(5000)*window + 2000
	for b.Loop() {
		require.NoError(b, rdb.FlushDB(ctx).Err())
		var usec [2]int64
		for blk := range 12 {
			skip := blk%2 == 0
			resetStats(b, rdb)
			for d := range block {
				p := d % pops
				m := ms[p]
				k := "id" + strconv.Itoa((d*7919)%ids)
				now := start + int64(d)
				c := &Call{Group: m.group(m.bucket(k)), Items: []Item{{Key: k, Bucket: m.bucket(k), N: 1, Want: 2}}}
				if skip {
					c.recorded = m.window(now) + 2
				}
				_, err := Exec(ctx, rdb, m, c, now)
				require.NoError(b, err, "decision %d of block %d", d, blk)
			}
			us, calls := scriptUsec(b, rdb)
			require.Equal(b, int64(block), calls, "one EVALSHA per decision")
			usec[blk%2] += us
		}
		rec, unrec := float64(usec[0])/(6*block), float64(usec[1])/(6*block)
		b.ReportMetric(rec, "µs/call-recorded")
		b.ReportMetric(unrec, "µs/call-unrecorded")
		b.ReportMetric(unrec/rec, "unrecorded-x-recorded")
	}
}
