package reconcile

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// escrowScript is hybrid_escrow.lua: a reconcile batch that also keeps
// each PoP's escrowed allowance (see Grant).
var escrowScript = newScript("hybrid_escrow")

// GrantKey is the Redis key of identity's allowances in namespace ns:
// "ns:{k:identity}:g", in the same hash slot as its window hashes (Key).
func GrantKey(ns, identity string) string {
	k := Key(ns, identity, 0)
	return k[:len(k)-1] + "g"
}

// EscrowItem is one identity of an escrow batch: the Item, and how many
// units of allowance the caller would like to hold.
type EscrowItem struct {
	Item
	Want  int64
	Owned bool // the caller believed it owned the identity when it read the item (see Grant)
}

// EscrowParams are what an escrow batch's grants are computed against: the
// caller's time (ms; also the clock of every allowance's expiry), the
// position in the window, the limit, and how long a grant lasts unless a
// later batch of the same PoP renews it.
type EscrowParams struct {
	Now, Elapsed, WindowMillis, Max int64
	Lease                           time.Duration
}

// Grant is the caller's allowance after an escrow batch: Units it may admit
// without asking, until Expiry (ms, by the caller's clock; 0 with no
// units and no ownership). Redis grants only while the global sliding
// estimate plus every PoP's outstanding allowance stays within what the
// article's rule admits (estimate below the limit: see
// lua/hybrid_escrow.lua). Owner means the caller holds the identity alone
// until Expiry: it asked while no other PoP held or asked for an
// allowance, and no other PoP is granted anything until it reports what it
// admitted after it lost ownership, so it may admit whatever its own view
// admits (Units is then 0). The zero Grant holds nothing.
type Grant struct {
	Units, Expiry int64
	Owner         bool
}

// FlushEscrow is Flush for escrow batches: it merges items into Redis,
// takes the units each reports as new out of this PoP's allowance, grants
// up to Want more where the limit leaves room, and returns, in order, what
// Redis holds for each and the PoP's allowance. One round trip (one
// pipeline on a ClusterClient). Errors as Flush.
func (s *Store) FlushEscrow(ctx context.Context, items []EscrowItem, p EscrowParams) ([]Result, []Grant, error) {
	if len(items) == 0 {
		return nil, nil, nil
	}
	if s.cluster != nil {
		return s.escrowCluster(ctx, items, p)
	}
	o := s.FlushEscrowOp(items, p)
	o.Run(ctx, s.rdb)
	return o.Escrowed()
}

// FlushEscrowOp prepares FlushEscrow's call for a single Redis server
// without sending it (see Op); nil on a ClusterClient or for no items.
func (s *Store) FlushEscrowOp(items []EscrowItem, p EscrowParams) *Op {
	if s.cluster != nil || len(items) == 0 {
		return nil
	}
	keys, args := s.escrowArgs(items, p)
	return &Op{script: escrowScript, keys: keys, args: args, n: len(items)}
}

// Escrowed is the reply of a sent FlushEscrowOp, as FlushEscrow returns it.
func (o *Op) Escrowed() ([]Result, []Grant, error) {
	v, err := o.reply("redis escrow")
	if err != nil {
		return nil, nil, err
	}
	return parseEscrow(v, o.n)
}

func (s *Store) escrowArgs(items []EscrowItem, p EscrowParams) (keys []string, args []any) {
	keys = make([]string, 0, 3*len(items))
	args = make([]any, 0, 7+3*len(items))
	args = append(args, s.id, s.ttl, p.Now, p.Elapsed, p.WindowMillis, p.Max, p.Lease.Milliseconds())
	for _, it := range items {
		keys = append(keys, Key(s.ns, it.Key, it.Index), Key(s.ns, it.Key, it.Index-1), GrantKey(s.ns, it.Key))
		o := "0"
		if it.Owned {
			o = "1"
		}
		args = append(args, strconv.FormatInt(it.Own[0], 10), strconv.FormatInt(it.Own[1], 10), it.Want, o)
	}
	return keys, args
}

// escrowCluster sends one cross-slot script call per master serving items
// (see crossslot.go) or, where the cluster does not take those, one script
// call per identity, in one pipeline.
func (s *Store) escrowCluster(ctx context.Context, items []EscrowItem, p EscrowParams) ([]Result, []Grant, error) {
	if s.crossSlotOK() {
		res, grants, err := s.escrowGroups(ctx, items, p)
		if !s.crossSlotResult(err) {
			if err != nil && !errors.Is(err, errReply) {
				err = unavailable("redis escrow", err)
			}
			return res, grants, err
		}
	}
	cmds := make([]*redis.Cmd, len(items))
	_, err := s.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
		for i, it := range items {
			keys, args := s.escrowArgs([]EscrowItem{it}, p)
			cmds[i] = escrowScript.Eval(ctx, pl, keys, args...)
		}
		return nil
	})
	if err != nil {
		return nil, nil, unavailable("redis escrow pipeline", err)
	}
	res, grants := make([]Result, 0, len(items)), make([]Grant, 0, len(items))
	for _, c := range cmds {
		v, err := c.Slice()
		if err != nil {
			return nil, nil, unavailable("redis escrow", err)
		}
		r, g, err := parseEscrow(v, 1)
		if err != nil {
			return nil, nil, err
		}
		res, grants = append(res, r[0]), append(grants, g[0])
	}
	return res, grants, nil
}

// escrowReplyLen is how many values hybrid_escrow.lua replies per item:
// two windows' prior and HGETALL, then units, expiry and ownership.
const escrowReplyLen = 7

func parseEscrow(v []any, n int) ([]Result, []Grant, error) {
	if len(v) != escrowReplyLen*n+1 {
		return nil, nil, errReply
	}
	server, ok := v[escrowReplyLen*n].(int64)
	if !ok {
		return nil, nil, errReply
	}
	res, grants := make([]Result, n), make([]Grant, n)
	for i := range res {
		res[i].ServerMillis = server
	}
	for i := range res {
		for w := 0; w < 2; w++ {
			p, f, err := parsePair(v[escrowReplyLen*i+2*w], v[escrowReplyLen*i+2*w+1])
			if err != nil {
				return nil, nil, err
			}
			res[i].Prior[w], res[i].Fields[w] = p, f
		}
		u, ok1 := v[escrowReplyLen*i+4].(int64)
		e, ok2 := v[escrowReplyLen*i+5].(int64)
		o, ok3 := v[escrowReplyLen*i+6].(int64)
		if !ok1 || !ok2 || !ok3 {
			return nil, nil, errReply
		}
		grants[i] = Grant{Units: u, Expiry: e, Owner: o == 1}
	}
	return res, grants, nil
}

// escrowGroups is escrowCluster's cross-slot path; errors come unwrapped.
func (s *Store) escrowGroups(ctx context.Context, items []EscrowItem, p EscrowParams) ([]Result, []Grant, error) {
	groups := s.byMaster(ctx, len(items), func(i int) string { return Key(s.ns, items[i].Key, items[i].Index) })
	cmds, err := s.runGroups(ctx, crossEscrow, groups, func(g []int) ([]string, []any) {
		return s.escrowArgs(pick(items, g), p)
	})
	if err != nil {
		return nil, nil, err
	}
	res, grants := make([]Result, len(items)), make([]Grant, len(items))
	for gi, g := range groups {
		v, err := cmds[gi].Slice()
		if err != nil {
			return nil, nil, err
		}
		r, gr, err := parseEscrow(v, len(g))
		if err != nil {
			return nil, nil, err
		}
		for k, i := range g {
			res[i], grants[i] = r[k], gr[k]
		}
	}
	return res, grants, nil
}
