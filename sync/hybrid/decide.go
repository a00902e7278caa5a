package hybrid

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// errNotSent is the cause of a Call completed without being made.
var errNotSent = errors.New("call completed without being sent")

// verdict is what the view says about a request.
type verdict uint8

const (
	admitLocal verdict = iota
	admitCalm          // admitted locally at most CalmShare × Max: gossiped, kept out of Redis
	denyCached
	askRedis
	askRedisOwn // askRedis, and the next Sync asks to own the identity (Config.Owners)
	denyEscrow  // within the margin, no allowance left (Config.Escrow): denied here, queued for a grant
)

// AllowN decides on w units of key at now. Far below the limit it admits
// from the view (core.SourceLocal, no network call); with the view over the
// limit it denies (core.SourceCachedDeny, no network call); within Margin of
// the limit it decides atomically at Redis (core.SourceRedis, one round
// trip). When Redis is unreachable for such a request it returns a
// *core.UnavailableError together with a decision from the view (see the
// package doc on outages) or, with FailClosed, a denial
// (core.SourceFailClosed). ctx bounds only the wait on Redis: a decision
// from the view never fails for lack of time, even with ctx already done,
// and a request within the margin whose ctx is done before the call is
// decided as when Redis is unreachable, without calling it or marking it
// down. Bad input (key, weight) returns an error matching core.ErrInvalid
// and changes nothing.
func (n *Node) AllowN(ctx context.Context, key string, now time.Time, w int64) (core.Decision, error) {
	if err := n.check(key, w); err != nil {
		return core.Decision{}, err
	}
	return n.allowAt(ctx, key, n.ms(now), w)
}

// Allow is AllowN(ctx, key, clock.Now(), 1), with the Clock read as
// milliseconds when core.MilliClockOf accepted it at New.
func (n *Node) Allow(ctx context.Context, key string) (core.Decision, error) {
	if n.milli == nil {
		return n.AllowN(ctx, key, n.cfg.Clock.Now(), 1)
	}
	if err := core.ValidateKey(key); err != nil { // weight 1 always fits a valid limit
		return core.Decision{}, err
	}
	return n.allowAt(ctx, key, n.milli.UnixMilli()+n.offset.Load(), 1)
}

// allowAt is AllowN on checked input at ms: begin, and when the view asks
// Redis, the Call made at once and completed.
func (n *Node) allowAt(ctx context.Context, key string, ms, w int64) (core.Decision, error) {
	slot, err := n.enter()
	if err != nil {
		return core.Decision{}, err
	}
	defer n.exit(slot)
	d, c, err := n.begin(ctx, key, ms, w)
	if c == nil {
		return d, err
	}
	if err := ctx.Err(); err != nil {
		// No time left to wait on Redis (a stalled caller): decide
		// without it, and without blaming it (no down mark, no call).
		return n.fallback(c.e, c.at, c.args.N, err)
	}
	n.Exec(ctx, c)
	return n.completeDecide(c)
}

// Begin is AllowN without the wait for Redis, for drivers that carry the
// Node's Redis calls themselves (a simulator of the network; see Call).
// When the view decides, it returns the decision and a nil Call, exactly as
// AllowN would. When the request must be decided at Redis it returns a
// Call (and a zero Decision): make it with Exec (or Fail it), then
// Complete gives the decision. Meanwhile the Node goes on deciding other
// requests from its view, as concurrent callers of AllowN would. Errors
// are AllowN's.
func (n *Node) Begin(ctx context.Context, key string, now time.Time, w int64) (core.Decision, *Call, error) {
	if err := n.check(key, w); err != nil {
		return core.Decision{}, nil, err
	}
	slot, err := n.enter()
	if err != nil {
		return core.Decision{}, nil, err
	}
	defer n.exit(slot)
	return n.begin(ctx, key, n.ms(now), w)
}

// Complete applies the reply of a Call that Begin returned (made by Exec or
// failed by Fail) and returns the request's decision, as AllowN would have.
// A Call from SyncRound.Next goes to SyncRound.Finish instead; a Call not
// yet made is failed as never sent.
func (n *Node) Complete(c *Call) (core.Decision, error) {
	if c.kind != callDecide {
		return core.Decision{}, fmt.Errorf("%w: Complete of a Sync batch (use SyncRound.Finish)", ErrBadConfig)
	}
	if !c.done {
		n.Fail(c, errNotSent)
	}
	return n.completeDecide(c)
}

// begin decides from the view, or prepares the Redis Call (see Begin).
// Called between enter and exit.
func (n *Node) begin(ctx context.Context, key string, ms, w int64) (core.Decision, *Call, error) {
	e := n.lockLive(n.entry(key, ms, false), ms, false)
	d, v := n.fromView(e, ms, w, true)
	audit := v != askRedis && v != askRedisOwn && n.sampled()
	var s auditSample
	if audit {
		s = n.sample(e, ms, w, v == admitLocal || v == admitCalm)
	}
	renew := v == denyCached && e.escrow != nil && e.escrow.renewDue(ms, n.cfg.Lease.Milliseconds())
	e.mu.Unlock()
	if audit {
		n.submit(s)
	}
	switch v {
	case admitLocal:
		n.st.local.Add(1)
		n.enqueue(e, true, true)
	case admitCalm:
		n.st.local.Add(1)
		n.enqueue(e, false, true)
	case denyCached:
		n.st.cachedDeny.Add(1)
		if renew { // an owner over its limit admits nothing, so nothing else would carry the identity to Redis
			n.enqueue(e, true, false)
		}
	case denyEscrow:
		n.st.escrowDenies.Add(1)
		n.enqueue(e, true, false) // the next Sync asks for an allowance
	case askRedis, askRedisOwn:
		if v == askRedisOwn {
			n.enqueue(e, true, false)
		}
		c, d, err := n.beginDecide(ctx, e, ms, w)
		return d, c, err
	}
	return d, nil, nil
}

// Peek reports, from the view alone (no network call, nothing counted,
// no view entry created), the decision one unit of key would get at now if
// decided locally. After Close it returns core.ErrClosed, as every
// decision does; a bad key returns an error matching core.ErrInvalid.
func (n *Node) Peek(ctx context.Context, key string, now time.Time) (core.Decision, error) {
	if err := core.ValidateKey(key); err != nil {
		return core.Decision{}, err
	}
	if n.isClosed() {
		return core.Decision{}, core.ErrClosed
	}
	ms := n.ms(now)
	e, ok := n.lookup(key)
	if !ok {
		idx, _ := n.position(ms)
		e = newEntry(key, idx, ms) // an empty view, not cached
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	d, _ := n.fromView(e, ms, 1, false)
	if d.Source == core.SourceCachedDeny {
		d.Source = core.SourceLocal
	}
	return d, nil
}

func (n *Node) check(key string, w int64) error {
	if err := core.ValidateKey(key); err != nil {
		return err
	}
	return n.cfg.Limit.CheckWeight(w)
}

// fromView decides w units of e at now (ms) from the view, counting them
// when admitted locally and commit is set. Called with e.mu held.
func (n *Node) fromView(e *entry, now, w int64, commit bool) (core.Decision, verdict) {
	idx, elapsed := n.position(now)
	e.roll(idx)
	if e.idx > idx { // clock behind the view: count in its newest window
		elapsed = 0
	}
	cur, prev := e.totals()
	est := core.SlidingEstimate(cur, prev, elapsed, n.w)
	max := n.cfg.Limit.Max
	stale := msDuration(now - e.refreshed)
	if !core.SlidingAdmits(est, max, w) {
		return n.decision(false, cur, prev, elapsed, w, core.SourceCachedDeny, stale), denyCached
	}
	contested := n.cfg.Margin > 0 && n.exposed(e, est, elapsed)+float64(w) > (1-n.cfg.Margin)*float64(max)
	switch {
	case contested && commit && n.cfg.Escrow:
		es := escrowOf(e)
		es.demand += w
		switch {
		case es.owns(now):
			n.st.escrowOwned.Add(1)
		case !es.take(now, w):
			return n.decision(false, cur, prev, elapsed, w, core.SourceLocal, stale), denyEscrow
		}
	case contested && commit && n.cfg.Owners:
		es := escrowOf(e)
		if !es.owns(now) {
			if !e.alone() { // Redis would not make this PoP the owner
				return core.Decision{}, askRedis
			}
			es.demand += w
			return core.Decision{}, askRedisOwn
		}
		n.st.escrowOwned.Add(1)
	case contested && commit:
		return core.Decision{}, askRedis
	case commit && e.escrow != nil:
		e.escrow.charge(w)
	}
	if commit {
		n.addOwn(e, idx, w) // in the request's window, even with the entry ahead
		cur += w
	}
	v := admitLocal
	if commit && n.calm(cur, prev, elapsed) {
		v = admitCalm
	}
	return n.decision(true, cur, prev, elapsed, w, core.SourceLocal, stale), v
}

// decision fills a core.Decision from global counts with core's math.
func (n *Node) decision(ok bool, cur, prev, elapsed, w int64, src core.Source, stale time.Duration) core.Decision {
	max := n.cfg.Limit.Max
	est := core.SlidingEstimate(cur, prev, elapsed, n.w)
	d := core.Decision{Allowed: ok, Limit: max, Source: src, Staleness: stale,
		Remaining:  core.SlidingRemaining(est, max),
		ResetAfter: msDuration(core.SlidingResetMillis(cur, prev, elapsed, n.w))}
	if !ok {
		d.RetryAfter = msDuration(core.SlidingRetryMillis(cur, prev, elapsed, n.w, max, w))
	}
	return d
}

// Reset forgets key: its view here and its Redis hashes of the Clock's
// current and previous windows and of the two windows the view holds (when
// they differ: a view lagging behind the clock, or ahead of it), in one
// round trip. Other PoPs keep what their views already hold until the
// window rolls, and may write it back to Redis; in the hybrid a reset is
// therefore exact only for this PoP's own counts.
func (n *Node) Reset(ctx context.Context, key string) error {
	if err := core.ValidateKey(key); err != nil {
		return err
	}
	idx, _ := n.position(n.ms(n.cfg.Clock.Now()))
	windows := []int64{idx}
	n.mu.Lock()
	e, ok := n.cache.Peek(key)
	if !ok {
		e = n.detached(key)
	}
	n.redisPending.del(key)
	n.gossipPending.del(key)
	delete(n.parked, key)
	n.noPark = true
	n.cache.Remove(key)
	n.noPark = false
	n.mu.Unlock()
	if e != nil {
		e.mu.Lock()
		e.gone = true // also when it was parked or pending: no longer the view's
		if e.idx != idx {
			windows = append(windows, e.idx) // the windows this view counts
		}
		e.mu.Unlock()
	}
	n.st.roundTrips.Add(1)
	if err := n.store.Delete(ctx, key, windows[0], windows[1:]...); err != nil {
		n.st.redisErrors.Add(1)
		return err
	}
	return nil
}

// exposed is the estimate the margin is checked against (see
// Config.PoPs): the view's estimate est, plus, when PoPs > 1, (PoPs − 1)
// × this PoP's own units of e that Redis has not acknowledged, weighted as
// the estimate weighs their windows (elapsed ms into the current one).
// Called with e.mu held.
func (n *Node) exposed(e *entry, est float64, elapsed int64) float64 {
	if n.cfg.PoPs <= 1 {
		return est
	}
	cur, prev := max(e.own[0]-e.acked[0], 0), max(e.own[1]-e.acked[1], 0)
	return est + float64(n.cfg.PoPs-1)*core.SlidingEstimate(cur, prev, elapsed, n.w)
}

// calm reports whether the sliding estimate of cur and prev at elapsed ms
// is at most CalmShare × Max while the NATS connection is up (always
// false, and nothing computed, with CalmShare 0): an identity that calm is
// kept out of Redis (see Config.CalmShare). With NATS down its units could
// reach no other PoP, so they go to Redis as without CalmShare.
func (n *Node) calm(cur, prev, elapsed int64) bool {
	return n.cfg.CalmShare > 0 &&
		core.SlidingEstimate(cur, prev, elapsed, n.w) <= n.cfg.CalmShare*float64(n.cfg.Limit.Max) &&
		n.cfg.NATS.IsConnected()
}
