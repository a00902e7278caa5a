package clustercheck

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
)

// ProbePrefix begins every key Check asks about with PlainKey: it lies in
// the backends/redis limiter's default "el" prefix, so a user whose ACL
// grants its keys (~el:*) may read them. Check writes none of them. A
// limiter of another prefix probes keys of its own (its CheckClient
// method).
const ProbePrefix = "el:clientcheck:"

// PlainKey returns probe key n of the backends/redis limiter's key shape:
// ProbePrefix followed by n ("el:clientcheck:7").
func PlainKey(n int) string { return ProbePrefix + strconv.Itoa(n) }

// TaggedKey returns probe key n of the sync/budget limiter's key shape,
// whose every key starts with a hash tag of its Namespace (default "el"):
// PlainKey(n) in braces ("{el:clientcheck:7}"), so a user whose ACL grants
// that limiter's keys (~{el:*) may read it.
func TaggedKey(n int) string { return "{" + PlainKey(n) + "}" }

// ProbesPerMaster is how many keys of each master's slots Check asks
// about. One would do for a plain client, which sends every key to its
// one node; more make it unlikely that a client routing keys its own way
// (a *goredis.Ring over the cluster's nodes) sends every probe to the
// right master by chance: with 3 masters, a Ring of them does with odds
// of 1 in 3^(3*ProbesPerMaster).
const ProbesPerMaster = 3

// maxSearch bounds how many candidate keys probes hashes. A master owning
// a single slot needs about Slots*ProbesPerMaster; past the bound (which
// no slot map reaches in practice) the masters short of keys are probed
// with the keys found.
const maxSearch = 1 << 22

// Check reports whether client reaches every key of the Redis behind it.
// It sends CLUSTER SLOTS through client: a server not in cluster mode
// (its reply "cluster support disabled") has nothing to redirect, and
// Check returns nil. Otherwise it sends, in one pipeline through client
// (one round trip per node the client talks to), EXISTS of
// ProbesPerMaster keys (key(0), key(1), ...: the calling limiter's key
// shape and prefix, so that an ACL user granted only the limiter's keys
// may read them; PlainKey or TaggedKey for the default prefix) hashing to
// the slots of each master CLUSTER SLOTS lists. A MOVED or ASK reply means
// client does not follow redirections: Check returns redirected(reply).
// No redirection
// (a *goredis.ClusterClient, a user's type wrapping one, a plain client of
// a cluster whose one master owns every slot) is nil. client nil (or a nil
// pointer): an error matching core.ErrInvalid. Any other failure (Redis
// unreachable, ctx done, an error reply such as NOPERM or CLUSTERDOWN): a
// *core.UnavailableError with Op op. ctx bounds the whole check.
func Check(ctx context.Context, client goredis.UniversalClient, key func(n int) string, op string, redirected func(reply error) error) error {
	if client == nil {
		return fmt.Errorf("%w: nil redis client", core.ErrInvalid)
	}
	if v := reflect.ValueOf(client); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Errorf("%w: nil redis client", core.ErrInvalid)
	}
	ranges, err := client.ClusterSlots(ctx).Result()
	if err != nil {
		if strings.Contains(err.Error(), "cluster support disabled") {
			return nil
		}
		return &core.UnavailableError{Op: op + " (cluster slots)", Err: err}
	}
	keys := probes(ranges, key)
	if len(keys) == 0 {
		return nil // no slot assigned: nothing to redirect to
	}
	pipe := client.Pipeline()
	cmds := make([]*goredis.IntCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.Exists(ctx, k)
	}
	_, _ = pipe.Exec(ctx) // each command's own error is read below
	var failed error
	for _, c := range cmds {
		err := c.Err()
		if IsRedirect(err) {
			return redirected(err)
		}
		if err != nil && failed == nil {
			failed = err
		}
	}
	if failed != nil {
		return &core.UnavailableError{Op: op + " (exists)", Err: failed}
	}
	return nil
}

// probes returns up to ProbesPerMaster keys hashing to the slots of each
// master of ranges (CLUSTER SLOTS: a master is its ranges' first node),
// the first such keys of key(0), key(1), key(2), ...
func probes(ranges []goredis.ClusterSlot, key func(n int) string) []string {
	owner := make([]int, Slots) // index+1 of the slot's master; 0: none
	masters := map[string]int{}
	for _, r := range ranges {
		if len(r.Nodes) == 0 || r.Start < 0 || r.End >= Slots || r.Start > r.End {
			continue
		}
		id := r.Nodes[0].ID
		if id == "" {
			id = r.Nodes[0].Addr
		}
		m, ok := masters[id]
		if !ok {
			m = len(masters) + 1
			masters[id] = m
		}
		for s := r.Start; s <= r.End; s++ {
			owner[s] = m
		}
	}
	found := make([]int, len(masters)+1)
	missing := len(masters) * ProbesPerMaster
	var keys []string
	for n := 0; missing > 0 && n < maxSearch; n++ {
		k := key(n)
		if m := owner[Slot(k)]; m != 0 && found[m] < ProbesPerMaster {
			found[m]++
			missing--
			keys = append(keys, k)
		}
	}
	return keys
}
