package hybrid

import (
	"context"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/reconcile"
)

// The Node's seam between its logic and its I/O ("sans-IO"). Everything the
// Node decides happens in its own methods, on explicit inputs: a request
// (Begin), a Redis reply (Complete, SyncRound.Finish), a gossip message
// (ApplyGossip) and a tick (BeginSync, Gossip). The one thing it does not
// do itself is wait for Redis: Begin and SyncRound.Next hand back a Call,
// the driver makes it (Exec, or Fail when it never reaches Redis) and hands
// the reply back. In production the driver is AllowN and Sync, which make
// every Call at once in the caller's goroutine; the simulator (sim/engine)
// instead executes each Call on the real Redis at its modelled arrival and
// hands the reply back at its modelled delivery, so the same code runs on a
// network that delays and reorders. A driver holding many Calls (of one
// Node or of several on one Redis server) may make them in one pipeline
// with ExecAll: Redis runs them in the order given, as Exec would.

// callKind says what a Call does at Redis.
type callKind uint8

const (
	callDecide callKind = iota // one Redis-decided request (reconcile.Store.Decide)
	callFlush                  // one batch of a Sync (reconcile.Store.Flush)
)

// Call is one round trip to Redis the Node asked for: a Redis-decided
// request (from Begin) or a batch of a Sync (from SyncRound.Next). It holds
// the arguments read from the view when it was made and, once made (Exec)
// or failed (Fail), the reply. A Call is used once, by one goroutine at a
// time; its zero value is unusable.
type Call struct {
	kind   callKind
	owner  *Node  // the Node that made it
	at     int64  // ms the call was made at (the request's or the Sync's now)
	node   string // the Redis node it goes to ("" unless clustered)
	done   bool   // Exec or Fail ran
	failed bool   // Fail ran

	// callDecide
	e    *entry
	args reconcile.DecideArgs
	ok   bool
	one  reconcile.Result

	// callFlush
	group   int   // its SyncRound group
	start   int   // its first identity's place in the group
	sentRaw int64 // ms by the Node's own Clock when the batch was handed out (for Config.RedisClock)
	batch   []*entry
	items   []reconcile.Item
	acked   []counts
	res     []reconcile.Result

	// callFlush with Config.Escrow: each identity's want and own-unit
	// count at the snapshot, and the grants of the reply
	escrow bool
	wants  []int64
	owned  []bool
	adds   []int64
	grants []reconcile.Grant

	err error
}

// Batch reports whether c is a Sync's batch (else a Redis-decided request).
func (c *Call) Batch() bool { return c.kind == callFlush }

// Exec makes c at Redis (one round trip) and keeps the reply in c for
// Complete or SyncRound.Finish. It does not touch the Node's view, so a
// driver may make it at any time after c was handed out; calling it twice
// does nothing.
func (n *Node) Exec(ctx context.Context, c *Call) {
	if c.done {
		return
	}
	c.done = true
	n.st.roundTrips.Add(1)
	switch c.kind {
	case callDecide:
		c.ok, c.one, c.err = n.store.Decide(ctx, c.args)
	case callFlush:
		if c.escrow {
			n.flushEscrow(ctx, c)
		} else {
			c.res, c.err = n.store.Flush(ctx, c.items)
		}
	}
	if c.err != nil {
		n.st.redisErrors.Add(1)
	}
}

// Fail records that c got no reply: its driver found Redis unreachable, or
// the network lost the call or, after Exec, its reply (whatever the call
// did at Redis then stays there, unknown to the Node). It is counted as a
// failed round trip with err as the cause a *core.UnavailableError reports,
// and the Node applies it as one. Failing a Call twice does nothing.
func (n *Node) Fail(c *Call, err error) {
	if c.failed {
		return
	}
	if !c.done {
		n.st.roundTrips.Add(1)
	}
	if c.err == nil {
		n.st.redisErrors.Add(1)
	}
	c.done, c.failed = true, true
	if _, ok := err.(*core.UnavailableError); !ok {
		err = &core.UnavailableError{Op: "redis call", Err: err}
	}
	c.err = err
}
