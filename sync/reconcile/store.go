package reconcile

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/edgelimit/edgelimit/lua"
	"github.com/redis/go-redis/v9"
)

// The hybrid's scripts, from package lua (hybrid_reconcile.lua,
// hybrid_decide.lua).
var (
	reconcileScript = newScript("hybrid_reconcile")
	decideScript    = newScript("hybrid_decide")
)

// script is a go-redis Script with its source, which Pipeline loads with
// SCRIPT LOAD inside a pipeline (Script.Load must not be given a pipeline:
// it would keep the not-yet-read reply, "", as the script's hash).
type script struct {
	*redis.Script
	src string
}

func newScript(name string) script {
	src := mustSource(name)
	return script{Script: redis.NewScript(src), src: src}
}

// mustSource returns an embedded script; a missing one is a build mistake.
func mustSource(name string) string {
	src, err := lua.Source(name)
	if err != nil {
		panic(err)
	}
	return src
}

// Item is one identity's entry in a batch: this PoP's cumulative counts in
// window Index (Own[0]) and Index-1 (Own[1]). A zero count writes nothing
// but the window is still read back.
type Item struct {
	Key   string
	Index int64
	Own   [2]int64
}

// Field is one PoP counter's cumulative count in one window.
type Field struct {
	ID    string
	Count int64
}

// Result is what Redis holds for one Item after the merge: per window
// (0 = Index, 1 = Index-1) this PoP's count before the merge (Prior; lower
// than what Redis acknowledged earlier means Redis lost data) and every
// field after it.
type Result struct {
	Prior  [2]int64
	Fields [2][]Field
	// ServerMillis is Redis' clock (TIME, ms) when the batch's script ran
	// (Flush and FlushEscrow; 0 from Decide).
	ServerMillis int64
}

// Total is the sum of every field of window w (0 current, 1 previous).
func (r *Result) Total(w int) int64 {
	var s int64
	for _, f := range r.Fields[w] {
		s += f.Count
	}
	return s
}

// Store reads and writes the hybrid's counters for one namespace, window
// and PoP counter id. It is safe for concurrent use. The zero value is
// unusable; build one with New.
type Store struct {
	rdb     redis.UniversalClient
	ns      string
	id      string
	ttl     string
	cluster *redis.ClusterClient
	cross   crossState     // cluster only: whether cross-slot batch scripts work (crossslot.go)
	loaded  [2]atomic.Bool // cluster only: crossReconcile, crossEscrow loaded on every node by this Store
}

// Option configures a Store.
type Option func(*options)

type options struct{ slack time.Duration }

// WithExpirySlack adds d to the TTL of every hash written (default 0: two
// windows). Raise it when the callers' clocks disagree, or when their now is
// a virtual clock that runs slower than the wall clock Redis expires keys
// by (a simulator). A negative d counts as 0.
func WithExpirySlack(d time.Duration) Option { return func(o *options) { o.slack = max(d, 0) } }

// New returns a Store writing field id of the hashes of namespace ns, with
// a TTL of two windows (plus WithExpirySlack's slack). It makes no call to
// Redis.
func New(rdb redis.UniversalClient, ns, id string, window time.Duration, opts ...Option) *Store {
	var o options
	for _, f := range opts {
		f(&o)
	}
	s := &Store{rdb: rdb, ns: ns, id: id,
		ttl: strconv.FormatInt(2*window.Milliseconds()+o.slack.Milliseconds(), 10)}
	s.cluster, _ = rdb.(*redis.ClusterClient)
	return s
}

// Clustered reports whether the client is a *redis.ClusterClient, whose
// identities Shard can tell apart.
func (s *Store) Clustered() bool { return s.cluster != nil }

// Shard names the Redis Cluster master serving identity's keys (its
// address), so callers can batch identities by node: a Flush of items that
// share a shard is exactly one round trip. It is "" when the client is not a
// *redis.ClusterClient or the cluster's slot map cannot be loaded (then
// Flush still works, one round trip per node touched). It makes a network
// call only when the client has no slot map yet.
func (s *Store) Shard(ctx context.Context, identity string) string {
	if s.cluster == nil {
		return ""
	}
	m, err := s.cluster.MasterForKey(ctx, Key(s.ns, identity, 0))
	if err != nil {
		return ""
	}
	return m.Options().Addr
}

// keys returns the two keys (window Index, Index-1) of it.
func (s *Store) keys(it Item) []string {
	return []string{Key(s.ns, it.Key, it.Index), Key(s.ns, it.Key, it.Index-1)}
}
