package hybrid

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/reconcile"
	goredis "github.com/redis/go-redis/v9"
)

// AuditQueueSize bounds the samples waiting for Audit when Config.AuditRate
// is set: a sample taken while the queue is full is dropped and counted in
// Stats.AuditDropped. One Audit call checks at most this many samples.
const AuditQueueSize = 4096

// auditSample is one sampled local decision: w units of key decided at
// elapsed ms into window idx, and this PoP's own counts of windows idx and
// idx-1 just before the decision (the units it admitted not included).
type auditSample struct {
	key     string
	idx     int64
	elapsed int64
	w       int64
	own     counts
	allowed bool
}

// auditTarget is one (identity, window) whose hashes an audit reads.
type auditTarget struct {
	key string
	idx int64
}

// initAudit makes the sample queue when auditing is on.
func (n *Node) initAudit() {
	if n.cfg.AuditRate > 0 {
		n.audits = make(chan auditSample, AuditQueueSize)
	}
}

// sampled draws whether the next local decision is audited.
func (n *Node) sampled() bool {
	r := n.cfg.AuditRate
	return r > 0 && (r >= 1 || rand.Float64() < r)
}

// sample records the decision just taken on w units of e at now (ms);
// allowed says its units were already added to e.own. Called with e.mu held,
// after fromView (or fallback) rolled e to now.
func (n *Node) sample(e *entry, now, w int64, allowed bool) auditSample {
	idx, elapsed := n.position(now)
	if e.idx > idx { // clock behind the view: decided in its newest window
		elapsed = 0
	}
	own := e.own
	if s := e.idx - idx; allowed && s <= 1 { // where addOwn counted them
		own[s] -= w
	}
	return auditSample{key: e.key, idx: e.idx, elapsed: elapsed, w: w, own: own, allowed: allowed}
}

// submit queues s for Audit without blocking; a full queue drops it.
func (n *Node) submit(s auditSample) {
	select {
	case n.audits <- s:
	default:
		n.st.auditDropped.Add(1)
	}
}

// Audit checks, at now, the local decisions sampled since the last call
// (Config.AuditRate; at most AuditQueueSize of them) against Redis'
// authoritative counts, and counts the outcome in Stats: AuditChecked,
// AuditFalseAllows (allowed here, denied by the authoritative count) and
// AuditFalseDenies (denied here, allowed by it). The background loop of
// Start calls it after every Sync; call it yourself when driving the Node
// by hand. With AuditRate 0, or nothing sampled, it does nothing and
// returns nil.
//
// A check reads, read-only, the hashes of the decision's two windows —
// every PoP's field — in one pipeline of HGETALL per batch of at most
// BatchSize identities (one batch per Redis Cluster master), counted in
// Stats.AuditRoundTrips, never in RedisRoundTrips. It then recomputes the
// decision with core's sliding math at the decision's position in the
// window, over: this PoP's own counts exactly as they were just before the
// decision (Redis' copy of this PoP's field is ignored, so this PoP's later
// hits and its not yet reconciled ones are both accounted for exactly) plus
// every other PoP counter's field as Redis holds it at audit time. The other
// PoPs' part is therefore not the count at decision time: it includes their
// hits that reached Redis after the decision (making an allow look wrong
// and a deny look right: for that part, false allows are an upper and
// false denies a lower estimate) and misses their hits admitted before the
// decision but not yet reconciled (the opposite bias, bounded by their sync
// interval). Audit promptly after the decision and Sync every PoP often to
// keep both small. Redis data lost (a restart, a Reset at another PoP) is
// reported as disagreement, which it is.
//
// Samples whose window ended before now are dropped, not checked (Redis may
// have expired the previous window's hash by then), and counted in
// Stats.AuditDropped. On a Redis failure the samples of the failed batch
// (and the rest of its master's) are dropped and counted likewise, the
// failure is counted in Stats.AuditErrors, and a *core.UnavailableError is
// returned; Audit never marks Redis down for decisions nor writes anything.
func (n *Node) Audit(ctx context.Context, now time.Time) error {
	if n.audits == nil {
		return nil
	}
	samples := n.drainAudits()
	if len(samples) == 0 {
		return nil
	}
	idx, _ := n.position(n.ms(now))
	byTarget := map[auditTarget][]auditSample{}
	for _, s := range samples {
		if s.idx < idx {
			n.st.auditDropped.Add(1)
			continue
		}
		t := auditTarget{s.key, s.idx}
		byTarget[t] = append(byTarget[t], s)
	}
	var errs []error
	for _, group := range n.auditShards(ctx, byTarget) {
		for start := 0; start < len(group); start += n.cfg.BatchSize {
			batch := group[start:min(start+n.cfg.BatchSize, len(group))]
			if err := n.auditBatch(ctx, batch, byTarget); err != nil {
				for _, t := range group[start:] {
					n.st.auditDropped.Add(uint64(len(byTarget[t])))
				}
				errs = append(errs, err)
				break
			}
		}
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// drainAudits takes what the queue holds, at most its capacity.
func (n *Node) drainAudits() []auditSample {
	var out []auditSample
	for len(out) < cap(n.audits) {
		select {
		case s := <-n.audits:
			out = append(out, s)
		default:
			return out
		}
	}
	return out
}

// auditShards orders the targets and splits them by the Redis Cluster
// master serving them (one group when Redis is not a cluster).
func (n *Node) auditShards(ctx context.Context, byTarget map[auditTarget][]auditSample) [][]auditTarget {
	targets := make([]auditTarget, 0, len(byTarget))
	for t := range byTarget {
		targets = append(targets, t)
	}
	slices.SortFunc(targets, func(a, b auditTarget) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
	if !n.store.Clustered() || len(targets) == 0 {
		return [][]auditTarget{targets}
	}
	groups := map[string][]auditTarget{}
	for _, t := range targets {
		s := n.store.Shard(ctx, t.key)
		groups[s] = append(groups[s], t)
	}
	names := make([]string, 0, len(groups))
	for s := range groups {
		names = append(names, s)
	}
	slices.Sort(names)
	out := make([][]auditTarget, len(names))
	for i, s := range names {
		out[i] = groups[s]
	}
	return out
}

// auditBatch reads the hashes of batch's windows in one pipeline and
// checks their samples.
func (n *Node) auditBatch(ctx context.Context, batch []auditTarget, byTarget map[auditTarget][]auditSample) error {
	cmds := make([][2]*goredis.MapStringStringCmd, len(batch))
	n.st.auditRoundTrips.Add(1)
	_, err := n.cfg.Redis.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i, t := range batch {
			for s := 0; s < 2; s++ {
				cmds[i][s] = p.HGetAll(ctx, reconcile.Key(n.cfg.Namespace, t.key, t.idx-int64(s)))
			}
		}
		return nil
	})
	if err != nil {
		n.st.auditErrors.Add(1)
		return &core.UnavailableError{Op: "redis audit", Err: err}
	}
	others := make([]counts, len(batch))
	for i := range batch {
		for s := 0; s < 2; s++ {
			if others[i][s], err = n.othersTotal(cmds[i][s].Val()); err != nil {
				n.st.auditErrors.Add(1)
				return err
			}
		}
	}
	for i, t := range batch {
		for _, s := range byTarget[t] {
			n.verify(s, others[i])
		}
	}
	return nil
}

// othersTotal sums the fields of one window's hash, this PoP's own left out.
func (n *Node) othersTotal(fields map[string]string) (int64, error) {
	var sum int64
	for id, v := range fields {
		if id == n.id {
			continue
		}
		c, err := strconv.ParseInt(v, 10, 64)
		if err != nil || c < 0 {
			return 0, fmt.Errorf("hybrid audit: field %q holds %q, not a count", id, v)
		}
		sum = satAdd(sum, c)
	}
	return sum, nil
}

// verify recomputes s's decision over its own counts plus others (the other
// PoPs' counts of windows s.idx and s.idx-1) and counts the outcome.
func (n *Node) verify(s auditSample, others counts) {
	cur, prev := satAdd(s.own[0], others[0]), satAdd(s.own[1], others[1])
	est := core.SlidingEstimate(cur, prev, s.elapsed, n.w)
	want := core.SlidingAdmits(est, n.cfg.Limit.Max, s.w)
	n.st.auditChecked.Add(1)
	switch {
	case s.allowed && !want:
		n.st.auditFalseAllows.Add(1)
	case !s.allowed && want:
		n.st.auditFalseDenies.Add(1)
	}
}
