package budget

import (
	"hash/fnv"
	"strconv"

	"github.com/edgelimit/edgelimit/core"
)

// bucket is identity key's bucket number, in [0, Buckets).
func (m *Machine) bucket(key string) int {
	h := fnv.New64a()
	h.Write([]byte(key))
	return int(h.Sum64() % uint64(m.cfg.Buckets))
}

// group is bucket b's group (hash tag), in [0, Groups).
func (m *Machine) group(b int) int { return b % m.cfg.Groups }

// Keyspace is the name a limit's state goes by under namespace ("" means
// "el", as Config.Namespace): namespace, ':', limit.Max in decimal, '/'
// and the window in the largest of d, h, m and s that divides it, else in
// ms — "el:10/1s" for 10 per second, "el:1000/1h" for 1000 per hour,
// "el:7/1500ms" (core.Limit.KeyText). Every Redis key of the limit carries it in its hash tag
// ("{el:10/1s:g0}:b3:e5"), so limits differing in Max or window never
// share a key under one Namespace, while every PoP of one limit (whatever
// its PoP, Incarnation, FreeCredit or NoWait) shares them all. It spells
// the limit as backends/redis' keys do.
func Keyspace(namespace string, limit core.Limit) string {
	if namespace == "" {
		namespace = "el"
	}
	return namespace + ":" + limit.KeyText()
}

// Keyspace returns Keyspace(Config.Namespace, Config.Limit), computed once
// at NewMachine: the start of every Redis key's hash tag and the space of
// its gossip (Transport), so a driver subscribes where UseNATS would.
func (m *Machine) Keyspace() string { return m.space }

// tag is group g's key prefix, a Redis Cluster hash tag holding the
// limit's Keyspace and the group: "{ns:10/1s:g<g>}". Every key the script
// touches starts with it (lua/budget.lua), so one limit's groups spread
// over the slots, and so do the groups of limits sharing a Namespace.
func (m *Machine) tag(g int) string {
	return "{" + m.space + ":g" + strconv.Itoa(g) + "}"
}

// BucketKey is the Redis key of the hash that holds bucket b's state of
// window x: windows 2e and 2e+1 share epoch e's hash,
// "{ns:10/1s:g<group>}:b<b>:e<e>" (see Keyspace), whose field per
// identity holds C, G, K of window 2e, then of window 2e+1 when that is
// not all zero, as MessagePack integers (see lua/budget.lua).
func (m *Machine) BucketKey(b int, x int64) string {
	return m.tag(m.group(b)) + ":b" + strconv.Itoa(b) + ":e" + strconv.FormatInt(floorDiv(x, 2), 10)
}
