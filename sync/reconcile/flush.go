package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/edgelimit/edgelimit/core"
	"github.com/redis/go-redis/v9"
)

// errReply reports a reply of the wrong shape (a script from another
// version of this package).
var errReply = errors.New("reconcile: unexpected script reply")

// errNotSent is the cause an Op's reply reports when it was never sent.
var errNotSent = errors.New("reconcile: the call was never sent")

// Flush merges items into Redis and returns, in the same order, what Redis
// holds for each after the merge. It costs one round trip: one multi-key
// script call, or on a ClusterClient one pipeline (one round trip per node).
// An unreachable Redis gives a *core.UnavailableError; nothing is partially
// reported (a failed batch may still have been applied, which the max-merge
// makes harmless to repeat).
func (s *Store) Flush(ctx context.Context, items []Item) ([]Result, error) {
	if len(items) == 0 {
		return nil, nil
	}
	if s.cluster != nil {
		return s.flushCluster(ctx, items)
	}
	o := s.FlushOp(items)
	o.Run(ctx, s.rdb)
	return o.Flushed()
}

// FlushOp prepares Flush's call for a single Redis server without sending
// it (see Op); nil on a ClusterClient or for no items.
func (s *Store) FlushOp(items []Item) *Op {
	if s.cluster != nil || len(items) == 0 {
		return nil
	}
	keys, args := s.flushArgs(items)
	return &Op{script: reconcileScript, keys: keys, args: args, n: len(items)}
}

// Flushed is the reply of a sent FlushOp, as Flush returns it.
func (o *Op) Flushed() ([]Result, error) {
	v, err := o.reply("redis reconcile")
	if err != nil {
		return nil, err
	}
	return parseFlush(v, o.n)
}

func (s *Store) flushArgs(items []Item) (keys []string, args []any) {
	keys = make([]string, 0, 2*len(items))
	args = make([]any, 0, 2+2*len(items))
	args = append(args, s.id, s.ttl)
	for _, it := range items {
		keys = append(keys, s.keys(it)...)
		args = append(args, strconv.FormatInt(it.Own[0], 10), strconv.FormatInt(it.Own[1], 10))
	}
	return keys, args
}

// flushCluster sends one cross-slot script call per master serving items
// (see crossslot.go) or, where the cluster does not take those, one script
// call per identity (its keys share a slot), in one pipeline: one round
// trip per node.
func (s *Store) flushCluster(ctx context.Context, items []Item) ([]Result, error) {
	if s.crossSlotOK() {
		out, err := s.flushGroups(ctx, items)
		if !s.crossSlotResult(err) {
			if err != nil && !errors.Is(err, errReply) {
				err = unavailable("redis reconcile", err)
			}
			return out, err
		}
	}
	cmds, err := s.pipeline(ctx, items, true)
	if err != nil && isNoScript(err) {
		cmds, err = s.pipeline(ctx, items, false)
	}
	if err != nil {
		return nil, unavailable("redis reconcile pipeline", err)
	}
	out := make([]Result, 0, len(items))
	for _, c := range cmds {
		v, err := c.Slice()
		if err != nil {
			return nil, unavailable("redis reconcile", err)
		}
		r, err := parseFlush(v, 1)
		if err != nil {
			return nil, err
		}
		out = append(out, r[0])
	}
	return out, nil
}

// flushGroups is flushCluster's cross-slot path; errors come unwrapped.
func (s *Store) flushGroups(ctx context.Context, items []Item) ([]Result, error) {
	groups := s.byMaster(ctx, len(items), func(i int) string { return Key(s.ns, items[i].Key, items[i].Index) })
	cmds, err := s.runGroups(ctx, crossReconcile, groups, func(g []int) ([]string, []any) {
		return s.flushArgs(pick(items, g))
	})
	if err != nil {
		return nil, err
	}
	out := make([]Result, len(items))
	for gi, g := range groups {
		v, err := cmds[gi].Slice()
		if err != nil {
			return nil, err
		}
		r, err := parseFlush(v, len(g))
		if err != nil {
			return nil, err
		}
		for k, i := range g {
			out[i] = r[k]
		}
	}
	return out, nil
}

// pick returns the elements of xs at indexes at, in that order.
func pick[T any](xs []T, at []int) []T {
	out := make([]T, len(at))
	for k, i := range at {
		out[k] = xs[i]
	}
	return out
}

func (s *Store) pipeline(ctx context.Context, items []Item, sha bool) ([]*redis.Cmd, error) {
	cmds := make([]*redis.Cmd, len(items))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, it := range items {
			keys, args := s.flushArgs([]Item{it})
			if sha {
				cmds[i] = reconcileScript.EvalSha(ctx, p, keys, args...)
			} else {
				cmds[i] = reconcileScript.Eval(ctx, p, keys, args...)
			}
		}
		return nil
	})
	return cmds, err
}

func isNoScript(err error) bool { return strings.HasPrefix(err.Error(), "NOSCRIPT") }

func parseFlush(v []any, n int) ([]Result, error) {
	if len(v) != 4*n+1 {
		return nil, errReply
	}
	server, ok := v[4*n].(int64)
	if !ok {
		return nil, errReply
	}
	out := make([]Result, n)
	for i := range out {
		out[i].ServerMillis = server
	}
	for i := range out {
		for w := 0; w < 2; w++ {
			p, f, err := parsePair(v[4*i+2*w], v[4*i+2*w+1])
			if err != nil {
				return nil, err
			}
			out[i].Prior[w], out[i].Fields[w] = p, f
		}
	}
	return out, nil
}

func parsePair(prior, fields any) (int64, []Field, error) {
	p, ok := prior.(int64)
	fl, ok2 := fields.([]any)
	if !ok || !ok2 || len(fl)%2 != 0 {
		return 0, nil, errReply
	}
	out := make([]Field, 0, len(fl)/2)
	for j := 0; j < len(fl); j += 2 {
		id, _ := fl[j].(string)
		cs, _ := fl[j+1].(string)
		c, err := strconv.ParseInt(cs, 10, 64)
		if err != nil {
			return 0, nil, fmt.Errorf("%w: field %q=%q", errReply, id, cs)
		}
		out = append(out, Field{ID: id, Count: c})
	}
	return p, out, nil
}

func unavailable(op string, err error) error {
	return &core.UnavailableError{Op: op, Err: err}
}
