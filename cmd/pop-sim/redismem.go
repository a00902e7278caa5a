package main

import (
	"context"
	"hash/maphash"
	"strconv"
	"strings"

	"github.com/edgelimit/edgelimit/sim/engine"
	goredis "github.com/redis/go-redis/v9"
)

// memMeter reads a single Redis node's used_memory before a mode and,
// after it, divides what grew by the identities whose keys the mode left
// in its namespace (the budget layout's: countBudgetKeys). On a cluster
// (or when INFO fails) it reports nothing.
type memMeter struct {
	rdb    *goredis.Client
	before int64
	ok     bool
	clock  *runClock // a budget mode's: its expired keys go first (expireBudgetKeys)
}

// startMemory reads used_memory of the Redis at addr; "" (a cluster) gives
// a meter that reports nothing.
func startMemory(ctx context.Context, addr string) *memMeter {
	if addr == "" || strings.Contains(addr, ",") {
		return &memMeter{}
	}
	m := &memMeter{rdb: goredis.NewClient(&goredis.Options{Addr: addr})}
	m.before, m.ok = usedMemory(ctx, m.rdb)
	return m
}

// stop measures namespace ns, whose keys must still be live, and closes
// the meter; nil when unknown or when the mode left no key.
func (m *memMeter) stop(ctx context.Context, ns string) *engine.RedisMemory {
	if m.rdb == nil {
		return nil
	}
	defer m.rdb.Close()
	var expired int64
	if m.clock != nil {
		n, err := expireBudgetKeys(ctx, m.rdb, ns, *m.clock)
		if err != nil {
			return nil
		}
		s, err := expireSlidingKeys(ctx, m.rdb, ns, *m.clock)
		if err != nil {
			return nil
		}
		expired = n + s
	}
	after, ok := usedMemory(ctx, m.rdb) // before the scan, whose replies Redis buffers
	if !m.ok || !ok {
		return nil
	}
	c, err := countKeys(ctx, m.rdb, ns+":*")
	if err == nil && c.keys == 0 { // the budget layout's keys: "{ns:10/1s:g<group>}:..."
		c, err = countBudgetKeys(ctx, m.rdb, ns)
	}
	if err != nil || c.identities == 0 {
		return nil
	}
	r := &engine.RedisMemory{UsedBytes: after - m.before, Keys: c.keys, Identities: c.identities, ExpiredKeys: expired}
	r.BytesPerIdentity = float64(r.UsedBytes) / float64(r.Identities)
	if c.hashes > 0 {
		r.FieldsPerHash = float64(c.fields) / float64(c.hashes)
	}
	return r
}

// usedMemory reads used_memory from INFO memory.
func usedMemory(ctx context.Context, rdb *goredis.Client) (int64, bool) {
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// keyCount is what countKeys found: keys, distinct identities, and the
// hashes among the keys with their fields.
type keyCount struct {
	keys, identities, hashes, fields int64
}

// countKeys scans the keys matching pattern. An identity is a key's hash
// tag, which every layout of ours puts before a last suffix ("ns:{id}:s:10/1s",
// "ns:{k:id}:idx"): the key up to its last '}'. Keys and identities are
// counted by 64-bit hashes, so a SCAN returning a key twice counts it
// once, in a few bytes each at a million identities (a collision among
// 10⁶ has odds of about 3·10⁻⁸). Each page's keys are asked HLEN in one
// pipeline; a key that is no hash answers WRONGTYPE and is not a hash.
func countKeys(ctx context.Context, rdb *goredis.Client, pattern string) (keyCount, error) {
	seed := maphash.MakeSeed()
	keys, ids := map[uint64]struct{}{}, map[uint64]struct{}{}
	var c keyCount
	err := scanFresh(ctx, rdb, pattern, seed, keys, func(fresh []string) error {
		for _, k := range fresh {
			if end := strings.LastIndexByte(k, '}'); end > 0 {
				ids[maphash.String(seed, k[:end+1])] = struct{}{}
			}
		}
		return countFields(ctx, rdb, fresh, &c)
	})
	c.keys, c.identities = int64(len(keys)), int64(len(ids))
	return c, err
}

// scanFresh SCANs the keys matching pattern and hands each page's keys not
// seen before to fn, recording them in seen by their hash under seed (a
// SCAN may return a key twice). It stops at the first error.
func scanFresh(ctx context.Context, rdb *goredis.Client, pattern string, seed maphash.Seed, seen map[uint64]struct{}, fn func(fresh []string) error) error {
	var cursor uint64
	for {
		page, next, err := rdb.Scan(ctx, cursor, pattern, scanCount).Result()
		if err != nil {
			return err
		}
		var fresh []string
		for _, k := range page {
			h := maphash.String(seed, k)
			if _, dup := seen[h]; dup {
				continue
			}
			seen[h] = struct{}{}
			fresh = append(fresh, k)
		}
		if err := fn(fresh); err != nil {
			return err
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// countFields adds the hashes among keys and their fields to c, in one
// pipeline.
func countFields(ctx context.Context, rdb *goredis.Client, keys []string, c *keyCount) error {
	if len(keys) == 0 {
		return nil
	}
	cmds, err := rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for _, k := range keys {
			p.HLen(ctx, k)
		}
		return nil
	})
	if err != nil && !isWrongType(err) {
		return err
	}
	for _, cmd := range cmds {
		if n, err := cmd.(*goredis.IntCmd).Result(); err == nil && n > 0 {
			c.hashes++
			c.fields += n
		}
	}
	return nil
}

// isWrongType reports whether err is Redis' WRONGTYPE reply (HLEN of a
// key that is no hash).
func isWrongType(err error) bool {
	return strings.HasPrefix(err.Error(), "WRONGTYPE")
}
