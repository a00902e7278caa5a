package hybrid

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// cmdLog is a go-redis hook recording the command names of every call:
// one slice per single command or pipeline (a round trip on one node).
type cmdLog struct {
	mu    sync.Mutex
	trips [][]string
}

func (l *cmdLog) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (l *cmdLog) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		l.add([]goredis.Cmder{cmd})
		return next(ctx, cmd)
	}
}
func (l *cmdLog) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		l.add(cmds)
		return next(ctx, cmds)
	}
}

func (l *cmdLog) add(cmds []goredis.Cmder) {
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.Name()
	}
	l.mu.Lock()
	l.trips = append(l.trips, names)
	l.mu.Unlock()
}

// take returns and forgets what was recorded.
func (l *cmdLog) take() [][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.trips
	l.trips = nil
	return out
}

// onlyReads fails unless every recorded round trip is a pipeline of
// HGETALL alone, and returns how many round trips and commands there were.
// A new connection's handshake (HELLO, CLIENT SETINFO) is not counted.
func onlyReads(t *testing.T, trips [][]string) (rt, cmds int) {
	t.Helper()
	trips = slices.DeleteFunc(slices.Clone(trips), func(tr []string) bool {
		return len(tr) > 0 && (tr[0] == "hello" || tr[0] == "client")
	})
	for _, tr := range trips {
		for _, c := range tr {
			if c != "hgetall" {
				t.Fatalf("audit sent %q (round trip %v): want HGETALL only", c, tr)
			}
		}
		cmds += len(tr)
	}
	return len(trips), cmds
}

func auditOn(rate float64) func(*Config) { return func(c *Config) { c.AuditRate = rate } }

// auditStats is the part of Stats the audit writes.
type auditStats struct{ checked, falseAllows, falseDenies, dropped, trips, errs uint64 }

func auditOf(n *Node) auditStats {
	s := n.Stats()
	return auditStats{s.AuditChecked, s.AuditFalseAllows, s.AuditFalseDenies,
		s.AuditDropped, s.AuditRoundTrips, s.AuditErrors}
}

func wantAudit(t *testing.T, n *Node, want auditStats) {
	t.Helper()
	if got := auditOf(n); got != want {
		t.Fatalf("audit stats %+v, want %+v", got, want)
	}
}

func mustAudit(t *testing.T, n *Node, now time.Time) {
	t.Helper()
	if err := n.Audit(context.Background(), now); err != nil {
		t.Fatalf("Audit: %v", err)
	}
}

func TestAuditRateValidated(t *testing.T) {
	rdb := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	for _, r := range []float64{-0.1, 1.0001, math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := New(Config{PoP: "p", Limit: core.PerWindow(10, time.Second), Redis: rdb, AuditRate: r})
		if !errors.Is(err, ErrBadConfig) || !errors.Is(err, core.ErrInvalid) {
			t.Errorf("AuditRate %v: err %v, want ErrBadConfig", r, err)
		}
	}
	for _, r := range []float64{0, 0.001, 0.5, 1} {
		n, err := New(Config{PoP: "p", Limit: core.PerWindow(10, time.Second), Redis: rdb, AuditRate: r})
		if err != nil {
			t.Fatalf("AuditRate %v: %v", r, err)
		}
		if (n.audits != nil) != (r > 0) {
			t.Fatalf("AuditRate %v: queue %v", r, n.audits != nil)
		}
	}
}

// TestAuditFindsOverAdmission: two PoPs on one Redis, no gossip. b spends
// all 100 units of "k" and reconciles; a, which never heard of it, admits
// 10 more locally (and 5 of a calm identity). The audit, one read-only
// pipeline, finds exactly the 10 false allows; then a false deny: a's
// view is refreshed, a denies 7 from it, and the identity is reset at
// Redis by b — the authority now says allow, and the audit finds exactly 7
// false denies.
func TestAuditFindsOverAdmission(t *testing.T) {
	e := newEnv(t, false)
	log := &cmdLog{}
	e.rdb.AddHook(log)
	a, b := e.node("a", auditOn(1)), e.node("b", nil)
	now := e.clock.Now()
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		if !mustAllow(t, b, "k", now).Allowed {
			t.Fatalf("b denied hit %d", i)
		}
	}
	mustSync(t, b, now)
	for i := 0; i < 10; i++ {
		if d := mustAllow(t, a, "k", now); !d.Allowed || d.Source != core.SourceLocal {
			t.Fatalf("a: %+v, want a local allow", d)
		}
	}
	for i := 0; i < 5; i++ {
		mustAllow(t, a, "calm", now)
	}
	if s := b.Stats(); s.AuditChecked+s.AuditDropped != 0 || b.audits != nil {
		t.Fatalf("b audits with AuditRate 0: %+v", s)
	}
	keysBefore := e.rdb.DBSize(ctx).Val()
	log.take()
	mustAudit(t, a, now)
	wantAudit(t, a, auditStats{checked: 15, falseAllows: 10, trips: 1})
	if rt, cmds := onlyReads(t, log.take()); rt != 1 || cmds != 4 {
		t.Fatalf("audit: %d round trips, %d commands; want 1 pipeline of 4 HGETALL", rt, cmds)
	}
	if s := a.Stats(); s.RedisRoundTrips != 0 {
		t.Fatalf("audit counted in RedisRoundTrips: %+v", s)
	}
	if got := e.rdb.DBSize(ctx).Val(); got != keysBefore {
		t.Fatalf("audit changed Redis: %d keys, was %d", got, keysBefore)
	}
	if e.redisTotal("el", "k", e.idx(a)) != 100 {
		t.Fatalf("audit wrote to Redis")
	}
	mustAudit(t, a, now) // nothing left: no round trip
	wantAudit(t, a, auditStats{checked: 15, falseAllows: 10, trips: 1})

	mustSync(t, a, now) // the view learns b's 100: a now denies from it
	for i := 0; i < 7; i++ {
		if d := mustAllow(t, a, "k", now); d.Allowed || d.Source != core.SourceCachedDeny {
			t.Fatalf("a after sync: %+v, want a cached deny", d)
		}
	}
	if err := b.Reset(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	mustAudit(t, a, now)
	wantAudit(t, a, auditStats{checked: 22, falseAllows: 10, falseDenies: 7, trips: 2})
}

// TestAuditAgreesWhenCurrent: with the view current — by gossip, or by
// reconcile — the audit finds no disagreement.
func TestAuditAgreesWhenCurrent(t *testing.T) {
	t.Run("gossip", func(t *testing.T) {
		e := newEnv(t, true)
		a, b := e.node("a", auditOn(1)), e.node("b", nil)
		now := e.clock.Now()
		for i := 0; i < 100; i++ {
			mustAllow(t, b, "k", now)
		}
		if err := b.Gossip(now); err != nil {
			t.Fatal(err)
		}
		flushNATS(t, b.cfg.NATS)
		waitFor(t, "b's gossip applied at a", func() bool { c, _ := a.Counts("k", now); return c == 100 })
		mustSync(t, b, now)
		for i := 0; i < 10; i++ {
			if d := mustAllow(t, a, "k", now); d.Allowed || d.Source != core.SourceCachedDeny {
				t.Fatalf("a: %+v, want a cached deny", d)
			}
		}
		for i := 0; i < 5; i++ {
			mustAllow(t, a, "calm", now)
		}
		mustAudit(t, a, now)
		wantAudit(t, a, auditStats{checked: 15, trips: 1})
	})
	t.Run("reconcile", func(t *testing.T) {
		e := newEnv(t, false)
		a, b := e.node("a", auditOn(1)), e.node("b", nil)
		now := e.clock.Now()
		mustAllow(t, a, "k", now)
		mustAudit(t, a, now)
		for i := 0; i < 99; i++ {
			mustAllow(t, b, "k", now)
		}
		mustSync(t, b, now)
		mustSync(t, a, now)
		for i := 0; i < 10; i++ {
			if d := mustAllow(t, a, "k", now); d.Allowed {
				t.Fatalf("a: %+v, want a deny", d)
			}
		}
		mustAudit(t, a, now)
		wantAudit(t, a, auditStats{checked: 11, trips: 2})
	})
}

// TestAuditCountsAsOfDecision: this PoP's own later hits (even once in
// Redis) are left out of the check, so a PoP alone is never wrong; another
// PoP's later hits, once in Redis, are in it (the documented upper
// estimate of false allows).
func TestAuditCountsAsOfDecision(t *testing.T) {
	e := newEnv(t, false)
	a, b := e.node("a", auditOn(1)), e.node("b", nil)
	now := e.clock.Now()
	allowed := 0
	for i := 0; i < 101; i++ {
		if mustAllow(t, a, "alone", now).Allowed {
			allowed++
		}
	}
	if allowed != 100 {
		t.Fatalf("allowed %d of 101", allowed)
	}
	mustSync(t, a, now) // Redis holds a's 100
	mustAudit(t, a, now)
	wantAudit(t, a, auditStats{checked: 101, trips: 1})

	mustAllow(t, a, "k", now) // right when decided
	for i := 0; i < 100; i++ {
		mustAllow(t, b, "k", now)
	}
	mustSync(t, b, now)
	mustAudit(t, a, now)
	wantAudit(t, a, auditStats{checked: 102, falseAllows: 1, trips: 2})
}

// TestAuditSamplesRate: about AuditRate of the local decisions are
// checked, in ceil(identities/BatchSize) read-only round trips.
func TestAuditSamplesRate(t *testing.T) {
	e := newEnv(t, false)
	log := &cmdLog{}
	e.rdb.AddHook(log)
	a := e.node("a", func(c *Config) { c.AuditRate = 0.25; c.BatchSize = 100 })
	now := e.clock.Now()
	const decisions, ids = 4000, 1000
	for i := 0; i < decisions; i++ {
		mustAllow(t, a, fmt.Sprint("id", i%ids), now)
	}
	sampled := len(a.audits)
	if sampled < 850 || sampled > 1150 { // mean 1000, sd 27
		t.Fatalf("sampled %d of %d at rate 0.25", sampled, decisions)
	}
	distinct := map[string]bool{}
	for range sampled { // look at the queue, keeping it as it was
		s := <-a.audits
		distinct[s.key] = true
		a.audits <- s
	}
	log.take()
	mustAudit(t, a, now)
	trips := (len(distinct) + 99) / 100
	wantAudit(t, a, auditStats{checked: uint64(sampled), trips: uint64(trips)})
	if rt, cmds := onlyReads(t, log.take()); rt != trips || cmds != 2*len(distinct) {
		t.Fatalf("%d round trips, %d commands; want %d, %d", rt, cmds, trips, 2*len(distinct))
	}
	t.Logf("rate 0.25: %d of %d decisions sampled, %d identities, %d round trips", sampled, decisions, len(distinct), trips)
}

// TestAuditQueueBounded: samples beyond AuditQueueSize are dropped and
// counted, the hot path never blocks; samples whose window ended are
// dropped at Audit without a round trip.
func TestAuditQueueBounded(t *testing.T) {
	e := newEnv(t, false)
	a := e.node("a", auditOn(1))
	now := e.clock.Now()
	for i := 0; i < AuditQueueSize+7; i++ {
		mustAllow(t, a, fmt.Sprint("id", i%1000), now)
	}
	wantAudit(t, a, auditStats{dropped: 7})
	mustAudit(t, a, now)
	wantAudit(t, a, auditStats{checked: AuditQueueSize, dropped: 7, trips: 4}) // 1000 identities, BatchSize 256

	for i := 0; i < 3; i++ {
		mustAllow(t, a, "late", now)
	}
	mustAudit(t, a, now.Add(a.cfg.Limit.Window))
	wantAudit(t, a, auditStats{checked: AuditQueueSize, dropped: 10, trips: 4})
}

// TestAuditRedisDown: a failed audit read is counted apart from the
// decision path (no RedisErrors, Redis not marked down), its samples are
// dropped and counted, and the error is a *core.UnavailableError. The
// fail-open local decisions of a Redis-decided request are sampled too.
func TestAuditRedisDown(t *testing.T) {
	rdb := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", MaxRetries: -1,
		DialTimeout: 100 * time.Millisecond})
	defer rdb.Close()
	n, err := New(Config{PoP: "a", Limit: core.PerWindow(100, 10*time.Second), Redis: rdb,
		Clock: core.NewManualClock(t0), Resync: -1, AuditRate: 1, Margin: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 60; i++ {
		d, _ := n.AllowN(context.Background(), "k", t0, 1)
		if !d.Allowed {
			t.Fatalf("hit %d: %+v", i, d)
		}
	}
	s := n.Stats()
	if s.LocalDecisions != 50 || s.FallbackLocal != 10 || len(n.audits) != 60 {
		t.Fatalf("local %d, fallback %d, sampled %d; want 50, 10, 60", s.LocalDecisions, s.FallbackLocal, len(n.audits))
	}
	ms := core.Millis(t0)
	rtBefore, downBefore := s.RedisRoundTrips, n.down.isDown("", ms)
	n.down.clear("")
	err = n.Audit(context.Background(), t0)
	var ue *core.UnavailableError
	if !errors.As(err, &ue) || !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("Audit: %v, want a *core.UnavailableError", err)
	}
	wantAudit(t, n, auditStats{dropped: 60, trips: 1, errs: 1})
	if s := n.Stats(); s.RedisRoundTrips != rtBefore || s.RedisErrors != 1 || n.down.isDown("", ms) {
		t.Fatalf("audit touched the decision path's state: %+v (down %v, was %v)", s, n.down.isDown("", ms), downBefore)
	}
}

// TestAuditBackgroundLoop: Start's sync loop drains the queue.
func TestAuditBackgroundLoop(t *testing.T) {
	e := newEnv(t, false)
	a, b := e.node("a", auditOn(1)), e.node("b", nil)
	now := e.clock.Now()
	for i := 0; i < 100; i++ {
		mustAllow(t, b, "k", now)
	}
	mustSync(t, b, now)
	a.Start(5*time.Millisecond, LoopOff)
	for i := 0; i < 5; i++ {
		mustAllow(t, a, "k", now)
	}
	waitFor(t, "the loop's audit", func() bool { return a.Stats().AuditChecked == 5 })
	if s := a.Stats(); s.AuditFalseAllows != 5 || s.AuditFalseDenies != 0 || s.AuditDropped != 0 {
		t.Fatalf("%+v", s)
	}
}

// TestAuditConcurrent: decisions and audits at once (run with -race);
// every sampled decision is checked or dropped, none wrong.
func TestAuditConcurrent(t *testing.T) {
	e := newEnv(t, false)
	a := e.node("a", auditOn(1))
	now := e.clock.Now()
	var wg sync.WaitGroup
	done, audited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(audited)
		for {
			select {
			case <-done:
				return
			default:
				_ = a.Audit(context.Background(), now)
			}
		}
	}()
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				if _, err := a.AllowN(context.Background(), fmt.Sprint("id", (g*500+i)%50), now, 1); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	<-audited
	mustAudit(t, a, now)
	s := a.Stats()
	if s.LocalDecisions != 2000 || s.AuditChecked+s.AuditDropped != 2000 ||
		s.AuditFalseAllows+s.AuditFalseDenies != 0 || s.AuditErrors != 0 {
		t.Fatalf("%+v", s)
	}
}

// TestAuditCluster: on a three-master Redis Cluster the audit sends one
// read-only pipeline per master holding sampled identities, with no
// CROSSSLOT or MOVED reply, and finds the planted false allows exactly.
func TestAuditCluster(t *testing.T) {
	e := newClusterEnv(t)
	var mu sync.Mutex
	perNode := map[string][][]string{}
	e.rdb.OnNewNode(func(c *goredis.Client) {
		addr := c.Options().Addr
		c.AddHook(hookFunc(func(names []string) {
			mu.Lock()
			perNode[addr] = append(perNode[addr], names)
			mu.Unlock()
		}))
	})
	a, b := e.node("a", func(c *Config) { c.AuditRate = 1; c.NATS = nil }), e.node("b", func(c *Config) { c.NATS = nil })
	now := e.clock.Now()
	ctx := context.Background()
	const ids = 30
	masters := map[string]bool{}
	for i := 0; i < ids; i++ {
		key := fmt.Sprint("id", i)
		masters[a.store.Shard(ctx, key)] = true
		for j := 0; j < 100; j++ {
			mustAllow(t, b, key, now)
		}
		mustAllow(t, a, key, now)
	}
	mustSync(t, b, now)
	mu.Lock()
	clear(perNode)
	mu.Unlock()
	mustAudit(t, a, now)
	wantAudit(t, a, auditStats{checked: ids, falseAllows: ids, trips: uint64(len(masters))})
	mu.Lock()
	seen := maps.Clone(perNode)
	mu.Unlock()
	got := 0
	for addr, trips := range seen {
		rt, _ := onlyReads(t, trips)
		if rt > 1 {
			t.Fatalf("master %s: %d round trips, want 1", addr, rt)
		}
		got += rt
	}
	if got != len(masters) {
		t.Fatalf("%d round trips, want %d (masters holding the identities)", got, len(masters))
	}
	e.noClusterErrors()
	idx, _ := a.position(core.Millis(now))
	for i := 0; i < ids; i++ {
		if tot := e.redisTotal(fmt.Sprint("id", i), idx); tot != 100 {
			t.Fatalf("id%d: Redis holds %d, want b's 100", i, tot)
		}
	}
}

// hookFunc is a go-redis hook calling f with the command names of each
// command or pipeline sent.
type hookFunc func(names []string)

func (f hookFunc) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (f hookFunc) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		f([]string{cmd.Name()})
		return next(ctx, cmd)
	}
}
func (f hookFunc) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		names := make([]string, len(cmds))
		for i, c := range cmds {
			names[i] = c.Name()
		}
		f(names)
		return next(ctx, cmds)
	}
}

// TestPendingGauges: Stats reports the identities waiting for Redis and
// for gossip, and they fall to zero once sent.
func TestPendingGauges(t *testing.T) {
	e := newEnv(t, true)
	a := e.node("a", nil)
	now := e.clock.Now()
	for _, k := range []string{"x", "y", "z", "x"} {
		mustAllow(t, a, k, now)
	}
	pend := func() [2]uint64 { s := a.Stats(); return [2]uint64{s.PendingRedis, s.PendingGossip} }
	if got := pend(); got != [2]uint64{3, 3} {
		t.Fatalf("pending %v, want [3 3]", got)
	}
	if err := a.Gossip(now); err != nil {
		t.Fatal(err)
	}
	if got := pend(); got != [2]uint64{3, 0} {
		t.Fatalf("after Gossip pending %v, want [3 0]", got)
	}
	mustSync(t, a, now)
	if got := pend(); got != [2]uint64{0, 0} {
		t.Fatalf("after Sync pending %v, want [0 0]", got)
	}

	solo := newEnv(t, false).node("solo", nil)
	mustAllow(t, solo, "x", now)
	if s := solo.Stats(); s.PendingRedis != 1 || s.PendingGossip != 0 {
		t.Fatalf("without NATS: %+v", s)
	}
}

// BenchmarkAuditHotPath is the cost of AllowN on warm keys with auditing
// off, at 1% and at every decision, the background loop draining the queue
// every 10ms (at rate 1 most samples are dropped: the drop path is timed).
func BenchmarkAuditHotPath(b *testing.B) {
	rdb, _ := redistest.Client(b)
	keys := make([]string, benchKeys)
	for i := range keys {
		keys[i] = fmt.Sprint("user:", i)
	}
	now := time.UnixMilli(1_800_000_000_000)
	for _, rate := range []float64{0, 0.01, 1} {
		b.Run(fmt.Sprint("rate=", rate), func(b *testing.B) {
			n, err := New(Config{PoP: "bench", Limit: core.PerWindow(1<<40, time.Hour), Redis: rdb,
				Resync: -1, AuditRate: rate, Clock: core.NewManualClock(now)})
			if err != nil {
				b.Fatal(err)
			}
			defer n.Close(context.Background())
			for _, k := range keys {
				n.AllowN(context.Background(), k, now, 1)
			}
			n.Start(10*time.Millisecond, LoopOff)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				n.AllowN(context.Background(), keys[i%benchKeys], now, 1)
			}
			b.StopTimer()
			s := n.Stats()
			b.ReportMetric(float64(s.AuditChecked+s.AuditDropped+uint64(len(n.audits)))/float64(b.N), "sampled/op")
		})
	}
}
