package budget

import (
	"hash/fnv"
	"strconv"
)

// bucket is identity key's bucket number, in [0, Buckets).
func (m *Machine) bucket(key string) int {
	h := fnv.New64a()
	h.Write([]byte(key))
	return int(h.Sum64() % uint64(m.cfg.Buckets))
}

// group is bucket b's group (hash tag), in [0, Groups).
func (m *Machine) group(b int) int { return b % m.cfg.Groups }

// tag is group g's key prefix, a Redis Cluster hash tag: "{ns:g<g>}".
func (m *Machine) tag(g int) string {
	return "{" + m.cfg.Namespace + ":g" + strconv.Itoa(g) + "}"
}

// BucketKey is the Redis key of the hash that holds bucket b's state of
// window x: windows 2e and 2e+1 share epoch e's hash,
// "{ns:g<group>}:b<b>:e<e>", whose field per identity holds C, G, K of
// window 2e, then of window 2e+1 when that is not all zero, as MessagePack
// integers (see lua/budget.lua).
func (m *Machine) BucketKey(b int, x int64) string {
	return m.tag(m.group(b)) + ":b" + strconv.Itoa(b) + ":e" + strconv.FormatInt(floorDiv(x, 2), 10)
}
