package hybrid

import (
	"context"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// SyncRound is one Sync's work, as the Node's seam hands it to a driver
// (see Call): the identities with hits not yet in Redis, grouped by the
// Redis node serving them (one group unless clustered), to be sent batch
// by batch. Within a group at most Config.SyncDepth batches are in flight:
// Next hands out no more until a Finish, and Sync sends each handful in one
// pipeline. A SyncRound is not
// safe for concurrent use within one group; different groups may be driven
// concurrently. Build one with BeginSync.
type SyncRound struct {
	n      *Node
	now    int64 // ms of the Sync
	groups []shardGroup
	sent   []int  // per group: entries handed out in batches so far
	open   []int  // per group: batches out and not yet finished
	ended  []bool // per group: a batch failed, or the group was abandoned
	moved  bool   // an identity's master changed since its last Sync
}

// shardGroup is the pending identities one Redis node serves.
type shardGroup struct {
	node    string // as reconcile.Store.Shard names it
	entries []*entry
}

// BeginSync starts a Sync at now: it drops parked identities whose counts
// left the live windows, queues every own count when a full re-send is due,
// and takes the pending identities. Drive the round with Next, Exec (or
// Fail) and Finish until Next returns nil for every group; Sync does
// exactly that. Identities whose batch was never handed out when the round
// is dropped stay out of the pending set until their next hit: a driver
// must finish what it begins.
func (n *Node) BeginSync(now time.Time) *SyncRound {
	return n.beginSync(context.Background(), n.ms(now))
}

func (n *Node) beginSync(ctx context.Context, ms int64) *SyncRound {
	idx, _ := n.position(ms)
	n.sweepParked(idx)
	n.maybeResendAll(ms)
	if n.owned.due() {
		n.sweepOwn(idx, nil)
	}
	groups, moved := n.byShard(ctx, n.take(true))
	if moved {
		n.mu.Lock()
		n.resendAll = true
		n.mu.Unlock()
	}
	k := len(groups)
	return &SyncRound{n: n, now: ms, groups: groups, sent: make([]int, k),
		open: make([]int, k), ended: make([]bool, k), moved: moved}
}

// Groups is how many Redis nodes the round sends to (1 unless clustered).
func (r *SyncRound) Groups() int { return len(r.groups) }

// more reports whether group g has entries not yet handed out.
func (r *SyncRound) more(g int) bool { return !r.ended[g] && r.sent[g] < len(r.groups[g].entries) }

// Next returns group g's next batch (at most BatchSize identities) as a
// Call, its counts read from the view now; nil when the group is done,
// ended by a failure, or has SyncDepth batches out.
func (r *SyncRound) Next(g int) *Call {
	if !r.more(g) || r.open[g] >= r.n.cfg.SyncDepth {
		return nil
	}
	es := r.groups[g].entries
	start := r.sent[g]
	batch := es[start:min(start+r.n.cfg.BatchSize, len(es))]
	r.sent[g] += len(batch)
	r.open[g]++
	c := &Call{kind: callFlush, owner: r.n, at: r.now, node: r.groups[g].node, group: g,
		start: start, batch: batch, escrow: r.n.cfg.Escrow || r.n.cfg.Owners, sentRaw: core.Millis(r.n.cfg.Clock.Now())}
	r.n.snapshot(c, r.now)
	return c
}

// Finish applies a batch's reply: every identity's view is refreshed with
// every PoP's counts, and a reply holding less of this PoP's field than
// Redis had acknowledged (a Redis restarted empty) makes the next Sync
// re-send every own count. On a failed batch (or one never made) it
// returns the *core.UnavailableError, puts the batch and the rest of its
// group (batches still in flight too: a re-send is harmless) back in the
// pending set, ends the group and marks its node down.
// When a group's last batch succeeds, its node's down mark is cleared.
func (r *SyncRound) Finish(c *Call) error {
	n, g := r.n, c.group
	if !c.done {
		n.Fail(c, errNotSent)
	}
	r.open[g]--
	if c.err != nil {
		n.requeue(r.groups[g].entries[c.start:])
		r.ended[g] = true
		n.markDown(c.node, n.detected(r.now))
		if c.escrow {
			restoreDemand(c)
		}
		return c.err
	}
	if len(c.res) > 0 {
		n.learnOffset(c.res[0].ServerMillis, c.sentRaw, core.Millis(n.cfg.Clock.Now()))
	}
	lost := false
	var released []*entry
	for i, e := range c.batch {
		// Redis lost data when it holds less of this PoP's field than it
		// had acknowledged before the batch was read: acknowledgements
		// merged since (a Redis-decided reply) may postdate this script.
		res := c.res[i]
		lost = lost || res.Prior[0] < c.acked[i][0] || res.Prior[1] < c.acked[i][1]
		e.mu.Lock()
		n.mergeResult(e, c.items[i].Index, res, c.items[i].Own, r.now)
		if c.escrow && escrowOf(e).granted(c.grants[i], c.adds[i]) {
			released = append(released, e)
		}
		e.mu.Unlock()
	}
	if len(released) > 0 {
		n.queueReleased(released)
	}
	if lost {
		n.mu.Lock()
		n.resendAll = true
		n.mu.Unlock()
	}
	if !r.more(g) && !r.ended[g] {
		n.down.clear(r.groups[g].node)
	}
	return nil
}

// abandon ends group g without sending the rest, which goes back to the
// pending set (a ctx ended during Sync's pause).
func (r *SyncRound) abandon(g int) {
	r.n.requeue(r.groups[g].entries[r.sent[g]:])
	r.ended[g] = true
}
