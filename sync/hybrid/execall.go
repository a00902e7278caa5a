package hybrid

import (
	"context"

	"github.com/edgelimit/edgelimit/sync/reconcile"
	"github.com/redis/go-redis/v9"
)

// ExecAll makes calls, which may come from several Nodes whose Redis is
// one server, in one pipeline on rdb (a client of that server): one round
// trip, in which Redis runs them one after the other in the order given,
// exactly as Exec would make them one by one, and each still counts as a
// round trip of the Node that made it. Sync sends its batches with it,
// SyncDepth at a time; the simulator sends every Call that has reached
// Redis (in virtual time) and not run yet. Calls already made are skipped. When rdb
// is a Redis Cluster client, or a Call's Node is clustered, each call is
// made with Exec instead, in order. Errors are each Call's, as after Exec.
func ExecAll(ctx context.Context, rdb redis.UniversalClient, calls []*Call) {
	ops, todo := make([]*reconcile.Op, 0, len(calls)), make([]*Call, 0, len(calls))
	for _, c := range calls {
		if c.done {
			continue
		}
		o := c.owner.op(c)
		if o == nil || c.owner.store.Clustered() {
			execEach(ctx, calls)
			return
		}
		ops, todo = append(ops, o), append(todo, c)
	}
	if _, ok := rdb.(*redis.ClusterClient); ok {
		execEach(ctx, calls)
		return
	}
	reconcile.Pipeline(ctx, rdb, ops)
	for i, c := range todo {
		c.owner.took(c, ops[i])
	}
}

// execEach makes every call not made yet with its Node's Exec, in order.
func execEach(ctx context.Context, calls []*Call) {
	for _, c := range calls {
		c.owner.Exec(ctx, c)
	}
}

// op prepares c's script call as one reconcile.Op; nil when its Store
// cannot (a batch on a Redis Cluster).
func (n *Node) op(c *Call) *reconcile.Op {
	switch {
	case c.kind == callDecide:
		return n.store.DecideOp(c.args)
	case c.escrow:
		return n.store.FlushEscrowOp(escrowItems(c.items, c.wants, c.owned), n.escrowParams(c))
	default:
		return n.store.FlushOp(c.items)
	}
}

// took marks c made and keeps the reply of its sent Op o, as Exec does.
func (n *Node) took(c *Call, o *reconcile.Op) {
	c.done = true
	n.st.roundTrips.Add(1)
	switch {
	case c.kind == callDecide:
		c.ok, c.one, c.err = o.Decided()
	case c.escrow:
		c.res, c.grants, c.err = o.Escrowed()
	default:
		c.res, c.err = o.Flushed()
	}
	if c.err != nil {
		n.st.redisErrors.Add(1)
	}
}
