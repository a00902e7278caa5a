package hybrid

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// Identities of BenchmarkSyncCost: 100,000 active, 1% contested.
const (
	costCalm      = 99_000
	costContested = 1_000
	// costMaxLoops bounds the iterations: each gives every calm identity
	// one more unit, and past 89 units its requests would go to Redis.
	costMaxLoops = 80
)

// BenchmarkSyncCost measures one Sync at 100,000 active identities of which
// 1,000 are contested (held within the margin of their limit, so their
// requests are decided at Redis), against one real redis-server:
//
//   - all-dirty: every identity has a new hit since the last Sync (today's
//     Sync: reconcile follows every identity with new hits);
//   - contested-only: only the 1,000 contested identities are in the Sync,
//     the calm ones untouched (reconcile following contested identities
//     only).
//
// Per iteration, untimed: 99,000 calm identities get one unit each
// (decided locally) in all-dirty, and each contested identity one request
// (decided at Redis while it fits, then denied from the view). Timed: one
// Sync. A Redis-decided unit is written by the decide script and does not
// queue its identity for the next Sync, so the contested identities are
// queued for it explicitly (n.enqueue, as a local admit does); their
// reconcile reads their hashes and writes nothing.
//
// Reported per Sync: Redis round trips (Stats deltas around the Sync
// only), identities sent (the pending set just before it), Redis' script
// time (INFO commandstats: usec of evalsha and eval) and CPU (INFO cpu:
// used_cpu_user + used_cpu_sys), and the pauses Sync took between batches
// (Config.SyncShare, default 0.5): ns/op is the Sync's wall time,
// pauses included.
func BenchmarkSyncCost(b *testing.B) {
	b.Run("all-dirty", func(b *testing.B) { benchSyncCost(b, true) })
	b.Run("contested-only", func(b *testing.B) { benchSyncCost(b, false) })
}

func benchSyncCost(b *testing.B, calmDirty bool) {
	ctx := context.Background()
	rdb, _ := redistest.Client(b)
	now := t0 // the clock never moves: every iteration is in one window
	n, err := New(Config{PoP: "bench", Limit: core.PerWindow(100, 10*time.Second), Redis: rdb,
		Margin: 0.1, Resync: -1, Capacity: 200_000, Clock: core.NewManualClock(t0),
		// Redis expires hashes by its wall clock, the Node's clock stands
		// still: a hash expiring mid-run would read as data loss and make
		// the next Sync re-send every identity.
		ExpirySlack: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close(ctx)
	var paused atomic.Int64
	n.sleep = func(ctx context.Context, d time.Duration) error {
		paused.Add(int64(d))
		return sleepCtx(ctx, d)
	}

	calm := make([]string, costCalm)
	for i := range calm {
		calm[i] = fmt.Sprint("calm:", i)
	}
	contested := make([]string, costContested)
	for i := range contested {
		contested[i] = fmt.Sprint("contested:", i)
	}
	allow := func(key string, w int64, want core.Source) {
		d, err := n.AllowN(ctx, key, now, w)
		if err != nil {
			b.Fatalf("AllowN(%q, %d): %v", key, w, err)
		}
		if d.Source != want && !(want == core.SourceRedis && d.Source == core.SourceCachedDeny) {
			b.Fatalf("AllowN(%q, %d) decided by %v, want %v", key, w, d.Source, want)
		}
	}

	// Setup: every identity known to Redis; the contested ones at 95 of
	// 100 (90 local units, then 5 decided at Redis: 90+1 > (1-0.1)*100).
	for _, k := range calm {
		allow(k, 1, core.SourceLocal)
	}
	for _, k := range contested {
		allow(k, 90, core.SourceLocal)
	}
	mustBenchSync(b, n, now)
	for range 5 {
		for _, k := range contested {
			allow(k, 1, core.SourceRedis)
		}
	}
	mustBenchSync(b, n, now)
	if s := n.Stats(); s.PendingRedis != 0 || s.RedisDecisions != 5*costContested {
		b.Fatalf("after setup: %d pending, %d Redis decisions", s.PendingRedis, s.RedisDecisions)
	}
	resends := n.Stats().Resends

	var trips, idents uint64
	var script int64
	var cpu float64
	var pause time.Duration
	loops := 0
	for b.Loop() {
		b.StopTimer()
		if loops++; loops > costMaxLoops {
			b.Fatalf("more than %d iterations: calm identities would reach the margin (use -benchtime Nx)", costMaxLoops)
		}
		if calmDirty {
			for _, k := range calm {
				allow(k, 1, core.SourceLocal)
			}
		}
		for _, k := range contested {
			allow(k, 1, core.SourceRedis)
			e, ok := n.lookup(k)
			if !ok {
				b.Fatalf("%s not in the view", k)
			}
			n.enqueue(e, true, false)
		}
		st0, rs0 := n.Stats(), readRedisCost(b, rdb)
		paused.Store(0)
		b.StartTimer()
		mustBenchSync(b, n, now)
		b.StopTimer()
		st1, rs1 := n.Stats(), readRedisCost(b, rdb)
		if st1.PendingRedis != 0 || st1.Resends != resends || st1.RedisErrors != 0 {
			b.Fatalf("Sync left %d pending, %d re-sends, %d errors", st1.PendingRedis, st1.Resends-resends, st1.RedisErrors)
		}
		trips += st1.RedisRoundTrips - st0.RedisRoundTrips
		idents += st0.PendingRedis
		script += rs1.scriptUsec - rs0.scriptUsec
		cpu += rs1.cpuSeconds - rs0.cpuSeconds
		pause += time.Duration(paused.Load())
		b.StartTimer()
	}
	per := float64(loops)
	b.ReportMetric(float64(trips)/per, "roundtrips/sync")
	b.ReportMetric(float64(idents)/per, "identities/sync")
	b.ReportMetric(float64(script)/1e3/per, "redis-script-ms/sync")
	b.ReportMetric(cpu*1e3/per, "redis-cpu-ms/sync")
	b.ReportMetric(float64(pause.Microseconds())/1e3/per, "pause-ms/sync")
}

// redisCost is what INFO reports of Redis' work so far.
type redisCost struct {
	scriptUsec int64   // commandstats usec of evalsha and eval
	cpuSeconds float64 // used_cpu_user + used_cpu_sys
}

func readRedisCost(b *testing.B, rdb *goredis.Client) redisCost {
	b.Helper()
	var c redisCost
	for _, section := range []string{"commandstats", "cpu"} {
		info, err := rdb.Info(context.Background(), section).Result()
		if err != nil {
			b.Fatalf("INFO %s: %v", section, err)
		}
		for line := range strings.Lines(info) {
			name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok {
				continue
			}
			switch name {
			case "cmdstat_evalsha", "cmdstat_eval":
				for kv := range strings.SplitSeq(rest, ",") {
					if v, ok := strings.CutPrefix(kv, "usec="); ok {
						u, err := strconv.ParseInt(v, 10, 64)
						if err != nil {
							b.Fatalf("INFO %s: %q", section, line)
						}
						c.scriptUsec += u
					}
				}
			case "used_cpu_user", "used_cpu_sys":
				f, err := strconv.ParseFloat(rest, 64)
				if err != nil {
					b.Fatalf("INFO %s: %q", section, line)
				}
				c.cpuSeconds += f
			}
		}
	}
	return c
}
