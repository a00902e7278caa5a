package reconcile

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// On a Redis Cluster the keys a command declares must share a hash slot.
// A script with the flag allow-cross-slot-keys (Redis 7.0 and later) may
// still reach, by redis.call, keys of other slots served by the node that
// runs it; the declared keys are checked all the same. The cross-slot
// variants below are the batch scripts with that flag, called with one
// declared key (the first, which routes the call) and every key in ARGV, a
// prologue putting KEYS and ARGV back as the script expects them (as
// locals, which shadow the globals for the rest of the chunk). So a batch
// of identities served by one master is one script call there, as on a
// single Redis, instead of one script per identity. On a Redis that does
// not know the flag (before 7.0) the variant fails to compile; the Store
// then remembers it and goes back to one script per identity. A key that
// has moved to another node fails the whole call (after it merged what
// came before, which the max-merge makes harmless to send again).
var (
	crossReconcile = crossSlot("hybrid_reconcile")
	crossEscrow    = crossSlot("hybrid_escrow")
)

// crossPrologue rebuilds KEYS and ARGV from a call made by crossArgs.
const crossPrologue = `#!lua flags=allow-cross-slot-keys
local KEYS, ARGV = (function(a)
  local n = tonumber(a[1])
  local k, v = {}, {}
  for i = 1, n do k[i] = a[1 + i] end
  for i = n + 2, #a do v[#v + 1] = a[i] end
  return k, v
end)(ARGV)
`

// crossSlot is the script called name with the allow-cross-slot-keys flag
// and crossPrologue.
func crossSlot(name string) script {
	src := crossPrologue + mustSource(name)
	return script{Script: redis.NewScript(src), src: src}
}

// crossArgs turns a batch script's keys and args into a cross-slot call's:
// the first key declared, then ARGV = the number of keys, the keys, args.
func crossArgs(keys []string, args []any) ([]string, []any) {
	a := make([]any, 0, 1+len(keys)+len(args))
	a = append(a, len(keys))
	for _, k := range keys {
		a = append(a, k)
	}
	return keys[:1], append(a, args...)
}

// crossState is a Store's knowledge of the cluster's support for
// cross-slot scripts: crossUnknown until a call shows it.
type crossState = atomic.Int32

const (
	crossUnknown int32 = iota
	crossWorks
	crossRefused
)

// crossSlotOK reports whether the Store still tries cross-slot scripts.
func (s *Store) crossSlotOK() bool { return s.cross.Load() != crossRefused }

// crossSlotResult records what a cross-slot call showed: err is nil, or an
// error that says the server did not take the script (then the Store uses
// one script per identity from now on, and refused is true: the caller
// retries that way).
func (s *Store) crossSlotResult(err error) (refused bool) {
	switch {
	case err == nil:
		s.cross.CompareAndSwap(crossUnknown, crossWorks)
	case notCompiled(err) && s.cross.Load() != crossWorks:
		s.cross.Store(crossRefused)
		return true
	}
	return false
}

// notCompiled reports a script the server could not take: a Redis before
// 7.0 reads the flag line as Lua and fails to compile it, and a server
// that ignores the flag refuses the keys' slots even with the script
// loaded (runGroups loads it after a first CROSSSLOT).
func notCompiled(err error) bool {
	m := err.Error()
	return strings.Contains(m, "Error compiling script") || strings.Contains(m, "Unknown lua shebang") ||
		strings.Contains(m, "Unexpected flag") || isCrossSlot(err)
}

// byMaster splits n items into groups served by one master each (the
// cluster's slot map, by the key key(i) returns), in the order their first
// item comes, each group in item order. An item whose master is unknown
// makes a group of its own.
func (s *Store) byMaster(ctx context.Context, n int, key func(i int) string) [][]int {
	at := map[string]int{}
	var groups [][]int
	for i := range n {
		addr := ""
		if m, err := s.cluster.MasterForKey(ctx, key(i)); err == nil {
			addr = m.Options().Addr
		}
		g, ok := at[addr]
		if !ok || addr == "" {
			g = len(groups)
			groups = append(groups, nil)
			at[addr] = g
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// runGroups sends one call of sc per group in one pipeline (one round trip
// per node), keys and args made by build, and returns each group's reply.
// The script is loaded on every node of the cluster first (replicas too,
// so a promoted one holds it) at the Store's first call of it, and again
// after a NOSCRIPT or a CROSSSLOT: a node that does not hold the
// script (a SCRIPT FLUSH, a node added) cannot know its flag and checks
// the slots before it would say NOSCRIPT. A script the server cannot take
// fails at the load (see notCompiled).
func (s *Store) runGroups(ctx context.Context, sc script, groups [][]int,
	build func(g []int) ([]string, []any)) ([]*redis.Cmd, error) {
	run := func() ([]*redis.Cmd, error) {
		cmds := make([]*redis.Cmd, len(groups))
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, g := range groups {
				keys, args := crossArgs(build(g))
				cmds[i] = sc.EvalSha(ctx, p, keys, args...)
			}
			return nil
		})
		return cmds, err
	}
	loaded := &s.loaded[0]
	if sc.Script == crossEscrow.Script {
		loaded = &s.loaded[1]
	}
	if !loaded.Load() {
		if err := sc.Load(ctx, s.cluster).Err(); err != nil {
			return nil, err
		}
		loaded.Store(true)
	}
	cmds, err := run()
	if err != nil && (isNoScript(err) || isCrossSlot(err)) {
		if err := sc.Load(ctx, s.cluster).Err(); err != nil {
			return nil, err
		}
		cmds, err = run()
	}
	return cmds, err
}

func isCrossSlot(err error) bool { return strings.HasPrefix(err.Error(), "CROSSSLOT") }
