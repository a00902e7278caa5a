package hybrid

import (
	"context"
	"errors"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/reconcile"
)

// errRedisDown is the cause reported while Redis-decided requests skip a
// Redis that failed less than RedisRetry ago.
var errRedisDown = errors.New("redis failed recently; retrying after RedisRetry")

// beginDecide prepares deciding w units of e at now (ms) at Redis: the
// Call sends this PoP's own counts (written) and its view of the others'
// (weighed in the estimate, not written: Redis holds only what each PoP
// wrote itself, so what gossip told this PoP never reaches Redis). When
// Redis failed less than RedisRetry ago it makes no Call and returns the
// fallback decision instead.
func (n *Node) beginDecide(ctx context.Context, e *entry, now, w int64) (*Call, core.Decision, error) {
	node := n.store.Shard(ctx, e.key) // once: a reload may re-route the key meanwhile
	if n.down.isDown(node, now) {
		d, err := n.fallback(e, now, w, errRedisDown)
		return nil, d, err
	}
	return &Call{kind: callDecide, owner: n, at: now, node: node, e: e, args: n.decideArgs(e, now, w)}, core.Decision{}, nil
}

// completeDecide applies the reply of a decide Call: it refreshes the view
// from what Redis holds and counts the units when admitted; on failure it
// marks the node down and falls back (see fallback).
func (n *Node) completeDecide(c *Call) (core.Decision, error) {
	now, w, args := c.at, c.args.N, c.args
	if c.err != nil {
		n.markDown(c.node, n.detected(now))
		return n.fallback(c.e, now, w, c.err)
	}
	n.down.clear(c.node)
	n.st.redis.Add(1)
	e := n.lockLive(c.e, now, false)
	if c.ok {
		n.addOwn(e, args.Index, w)
	}
	n.mergeResult(e, args.Index, c.one, [2]int64{}, now)
	// The script's estimate: what Redis holds merged with this view (the
	// peers' counts were weighed, not written).
	cur, prev := c.one.Total(0), c.one.Total(1)
	if e.idx == args.Index {
		vc, vp := e.totals()
		cur, prev = max(cur, vc), max(prev, vp)
	}
	// Redis holds less of this PoP's field than the view counts when units
	// admitted locally while this call was out went to Redis in a Sync
	// that reached it after the call: the script's increment then hid them
	// under the max-merge. Send the field again.
	resend := e.unacked()
	e.mu.Unlock()
	if c.ok || resend {
		n.enqueue(e, resend, c.ok)
	}
	return n.decision(c.ok, cur, prev, args.Elapsed, w, core.SourceRedis, 0), nil
}

// decideArgs are the arguments of deciding w units of e at Redis at now
// (ms), in the request's own window: when gossip from a clock ahead rolled
// the entry one window on, the decision (and the units it admits) is still
// in the window now is in, with the entry's counts of it.
func (n *Node) decideArgs(e *entry, now, w int64) reconcile.DecideArgs {
	idx, elapsed := n.position(now)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.roll(idx)
	d := int(e.idx - idx) // the request's window is slot d of the entry
	at := func(c counts) [2]int64 {
		var out [2]int64
		for s := 0; s+d < 2; s++ {
			out[s] = c[s+d]
		}
		return out
	}
	a := reconcile.DecideArgs{Item: reconcile.Item{Key: e.key, Index: idx, Own: at(e.own)},
		N: w, Max: n.cfg.Limit.Max, Elapsed: elapsed, WindowMillis: n.w,
		Peers: make([]reconcile.Peer, 0, len(e.peers)), Transient: true}
	if n.cfg.Owners {
		a.Held = &reconcile.Held{Now: now, Lease: n.cfg.Lease}
	}
	for _, p := range e.peers {
		if c := at(p.c); c != [2]int64{} {
			a.Peers = append(a.Peers, reconcile.Peer{ID: n.peerIDs.name(p.id), Counts: c})
		}
	}
	return a
}

// mergeResult max-merges what Redis holds for windows idx and idx-1 into
// e's view: other PoPs' fields, and this PoP's own field and sent (what the
// call wrote, zero for none) as acknowledgements. Called with e.mu held.
func (n *Node) mergeResult(e *entry, idx int64, r reconcile.Result, sent [2]int64, now int64) {
	for s := 0; s < 2; s++ {
		win := idx - int64(s)
		e.ack(win, sent[s])
		for _, f := range r.Fields[s] {
			if f.ID == n.id {
				e.ack(win, f.Count)
				continue
			}
			id, ok := n.peerIDs.of(f.ID)
			if !ok || e.mergeRedis(id, win, f.Count, n.gossipCap) {
				n.st.peersDropped.Add(1)
			}
		}
	}
	e.refreshed = max(e.refreshed, now)
}

// fallback decides a Redis-decided request without Redis: deny with
// FailClosed; else decide from the view as it is now, under the entry's
// lock, by the article's rule (admit when the estimate after the units is
// within the limit) and count the units when admitted. The view's verdict
// from before the wait no longer holds: every caller that waited on Redis
// meanwhile falls back too, and each sees the units the others admitted,
// so one PoP admits at most the limit of an identity while Redis is out
// (see the package doc for P PoPs). A denial is core.SourceCachedDeny.
func (n *Node) fallback(e *entry, now, w int64, cause error) (core.Decision, error) {
	err := cause
	if _, ok := cause.(*core.UnavailableError); !ok {
		err = &core.UnavailableError{Op: "redis decide", Err: cause}
	}
	e = n.lockLive(e, now, false)
	idx, elapsed := n.position(now)
	e.roll(idx)
	if e.idx > idx {
		elapsed = 0
	}
	stale := msDuration(now - e.refreshed)
	cur, prev := e.totals()
	ok := !n.cfg.FailClosed && core.SlidingAdmits(core.SlidingEstimate(cur, prev, elapsed, n.w), n.cfg.Limit.Max, w)
	if ok {
		n.addOwn(e, idx, w) // in the request's window, even with the entry ahead
		cur, prev = e.totals()
	}
	audit := !n.cfg.FailClosed && n.sampled()
	var s auditSample
	if audit {
		s = n.sample(e, now, w, ok)
	}
	e.mu.Unlock()
	if audit {
		n.submit(s)
	}
	switch {
	case n.cfg.FailClosed:
		n.st.failClosed.Add(1)
		return n.decision(false, cur, prev, elapsed, w, core.SourceFailClosed, stale), err
	case !ok:
		n.st.fallbackDenied.Add(1)
		return n.decision(false, cur, prev, elapsed, w, core.SourceCachedDeny, stale), err
	}
	n.st.fallback.Add(1)
	n.enqueue(e, true, true)
	return n.decision(true, cur, prev, elapsed, w, core.SourceLocal, stale), err
}

// detected is when a call made at made (ms) is found failed: the Clock's
// now, at least made. A call can fail a timeout after it was made, and a
// down mark counted from made would already have run out.
func (n *Node) detected(made int64) int64 {
	return max(made, n.ms(n.cfg.Clock.Now()))
}

// markDown records a failure of Redis node (see downSet) at now (ms):
// Redis-decided requests for the identities it serves skip it for
// RedisRetry, the next Sync re-sends every own count (the failure may be a
// master that died with acknowledged writes its replica never got, or a
// Redis that restarts empty), and a cluster client reloads its slot map
// (package internal/topology).
func (n *Node) markDown(node string, now int64) {
	n.down.mark(node, now+n.cfg.RedisRetry.Milliseconds())
	n.mu.Lock()
	n.resendAll = true
	n.mu.Unlock()
	n.reload.AfterError(n.cfg.Redis) // a dead master: find its promoted replica
}
