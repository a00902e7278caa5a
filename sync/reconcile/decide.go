package reconcile

import (
	"context"
	"slices"
	"strconv"
	"time"
)

// Peer is another PoP counter's cumulative counts as the caller knows them:
// Counts[0] in the current window, Counts[1] in the previous one.
type Peer struct {
	ID     string
	Counts [2]int64
}

// DecideArgs is one atomic decision at Redis for N units of Item.Key at
// Elapsed ms into window Item.Index of WindowMillis, under Max. Peers are
// merged (by maximum) before the estimate, so the decision never knows less
// than the caller's view.
type DecideArgs struct {
	Item
	Peers        []Peer
	N, Max       int64
	Elapsed      int64
	WindowMillis int64
	// Transient makes Peers weigh in this decision's estimate without being
	// written: each PoP's field then holds only what that PoP wrote itself,
	// so counts a caller merely heard of (by gossip) never reach Redis.
	// The reply's fields are what Redis stores.
	Transient bool
	// Held, when set, makes the decision weigh the identity's allowance
	// hash (GrantKey; see FlushEscrow): units other PoPs hold as
	// allowances leave that much less room, and while another PoP owns the
	// identity nothing is admitted and the caller is recorded as asking,
	// so the owner's next escrow batch releases it. Nil: the hash is not
	// read (a Node without escrow or owners).
	Held *Held
}

// Held is the caller's clock (ms) and the lease of allowances and
// ownerships, against which a decision weighs the allowance hash (see
// DecideArgs.Held and EscrowParams).
type Held struct {
	Now   int64
	Lease time.Duration
}

// Decide merges the caller's view into Redis (its peers' counts only in
// the estimate when Transient), computes the global sliding
// estimate over every PoP's fields, and when N units fit adds them to this
// PoP's field: one round trip, atomic. It returns whether they were
// admitted and the fields after the decision. Errors: *core.UnavailableError
// when Redis cannot be reached.
func (s *Store) Decide(ctx context.Context, a DecideArgs) (bool, Result, error) {
	o := s.DecideOp(a)
	o.Run(ctx, s.rdb)
	return o.Decided()
}

// DecideOp prepares Decide's call without sending it (see Op).
func (s *Store) DecideOp(a DecideArgs) *Op {
	persist := "1"
	if a.Transient {
		persist = "0"
	}
	args := make([]any, 0, 11+3*len(a.Peers))
	args = append(args, s.id, s.ttl, a.N, a.Elapsed, a.WindowMillis, a.Max,
		strconv.FormatInt(a.Own[0], 10), strconv.FormatInt(a.Own[1], 10), persist)
	keys := s.keys(a.Item)
	if a.Held != nil {
		keys = append(keys, GrantKey(s.ns, a.Key))
		args = append(args, a.Held.Now, a.Held.Lease.Milliseconds())
	}
	for _, p := range a.Peers {
		args = append(args, p.ID, strconv.FormatInt(p.Counts[0], 10), strconv.FormatInt(p.Counts[1], 10))
	}
	return &Op{script: decideScript, keys: keys, args: args}
}

// Decided is the reply of a sent DecideOp, as Decide returns it.
func (o *Op) Decided() (bool, Result, error) {
	v, err := o.reply("redis decide")
	if err != nil {
		return false, Result{}, err
	}
	if len(v) != 5 {
		return false, Result{}, errReply
	}
	var r Result
	allowed, _ := v[0].(int64)
	for w := 0; w < 2; w++ {
		if r.Prior[w], r.Fields[w], err = parsePair(v[1+2*w], v[2+2*w]); err != nil {
			return false, Result{}, err
		}
	}
	return allowed == 1, r, nil
}

// Delete removes identity's hashes for windows idx and idx-1, and for
// every index of more and the window before it, duplicates sent once, in one
// DEL (one round trip; all keys of one identity share a Cluster slot). Other
// PoPs' views are not told; see hybrid.Node.Reset.
func (s *Store) Delete(ctx context.Context, identity string, idx int64, more ...int64) error {
	keys := s.keys(Item{Key: identity, Index: idx})
	for _, i := range more {
		for _, k := range s.keys(Item{Key: identity, Index: i}) {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	if err := s.rdb.Del(ctx, keys...).Err(); err != nil {
		return unavailable("redis del", err)
	}
	return nil
}
