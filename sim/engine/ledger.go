package engine

import (
	"context"
	"strconv"

	"github.com/edgelimit/edgelimit/sync/reconcile"
	goredis "github.com/redis/go-redis/v9"
)

// ledger counts the units each hybrid incarnation (its counter id)
// admitted per identity and window of its own clock, so that after a run
// lost can compare them with the field Redis holds for that incarnation:
// units admitted and never counted at Redis.
//
// Incarnations are numbered (incarnation) so that a key holds no string:
// the map, one entry per identity, window and incarnation, then costs the
// collector nothing to scan and a lookup hashes 16 bytes.
type ledger struct {
	w     int64    // window ms
	nodes []string // counter id of each incarnation, by number
	units map[ledgerKey]int64
}

type ledgerKey struct {
	node int32 // the incarnation's number
	id   int32
	win  int64
}

func newLedger(e *Env) *ledger {
	return &ledger{w: e.Limit.WindowMillis(), units: map[ledgerKey]int64{}}
}

// incarnation numbers a new incarnation of counter id node, for add.
func (l *ledger) incarnation(node string) int32 {
	l.nodes = append(l.nodes, node)
	return int32(len(l.nodes) - 1)
}

// add records n units of identity id admitted by incarnation node (its
// number) at ms (its clock, ms since the epoch).
func (l *ledger) add(node int32, id int32, ms int64, n int64) {
	win := ms / l.w
	if ms%l.w < 0 {
		win--
	}
	l.units[ledgerKey{node, id, win}] += n
}

// losses is what lost found: in all, and by counter id.
type losses struct {
	total int64
	by    map[string]int64
}

// lostBatch bounds one pipeline of lost's reads.
const lostBatch = 1000

// lost reads, for every (incarnation, identity, window) of the ledger, the
// incarnation's field in Redis and sums what the ledger holds above it.
func (l *ledger) lost(ctx context.Context, e *Env) (losses, error) {
	out := losses{by: map[string]int64{}}
	keys := make([]ledgerKey, 0, len(l.units))
	for k := range l.units {
		keys = append(keys, k)
	}
	client, _ := e.countedClient(1)
	defer client.Close()
	for start := 0; start < len(keys); start += lostBatch {
		part := keys[start:min(start+lostBatch, len(keys))]
		cmds := make([]*goredis.StringCmd, len(part))
		_, err := client.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for i, k := range part {
				cmds[i] = p.HGet(ctx, reconcile.Key(e.Namespace, e.Key(k.id), k.win), l.nodes[k.node])
			}
			return nil
		})
		if err != nil && err != goredis.Nil {
			return out, err
		}
		for i, k := range part {
			if err := cmds[i].Err(); err != nil && err != goredis.Nil {
				return out, err
			}
			held, _ := strconv.ParseInt(cmds[i].Val(), 10, 64)
			if miss := l.units[k] - held; miss > 0 {
				out.total += miss
				out.by[l.nodes[k.node]] += miss
			}
		}
	}
	return out, nil
}
