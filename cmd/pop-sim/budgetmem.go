package main

import (
	"context"
	"hash/maphash"
	"regexp"

	goredis "github.com/redis/go-redis/v9"
)

// budgetPattern matches every key of the budget layout (sync/budget) in
// namespace ns: "{ns:g<group>}:..." (bucket hashes, retry guards, hot
// sets), which the "ns:*" pattern of the other modes misses.
func budgetPattern(ns string) string { return "{" + ns + ":g*" }

// budgetBucket matches a budget bucket hash's key, "{ns:g<g>}:b<b>:e<e>"
// (one hash per bucket and epoch of two windows).
var budgetBucket = regexp.MustCompile(`^\{[^{}]*:g[0-9]+\}:b[0-9]+:e-?[0-9]+$`)

// countBudgetKeys scans namespace ns's budget keys. An identity is a field
// of a bucket hash: it lives in its one bucket's hash of each live window,
// so the distinct field names over every bucket hash are exactly the
// identities Redis holds state of (counted by 64-bit hashes, as
// countKeys counts keys). Hashes and fields are the bucket hashes' alone;
// keys are every key of the layout. Each page's bucket hashes are asked
// HKEYS in one pipeline.
func countBudgetKeys(ctx context.Context, rdb *goredis.Client, ns string) (keyCount, error) {
	seed := maphash.MakeSeed()
	keys, ids := map[uint64]struct{}{}, map[uint64]struct{}{}
	var c keyCount
	err := scanFresh(ctx, rdb, budgetPattern(ns), seed, keys, func(fresh []string) error {
		var buckets []string
		for _, k := range fresh {
			if budgetBucket.MatchString(k) {
				buckets = append(buckets, k)
			}
		}
		return countBucketFields(ctx, rdb, buckets, seed, ids, &c)
	})
	c.keys, c.identities = int64(len(keys)), int64(len(ids))
	return c, err
}

// countBucketFields adds the bucket hashes among keys, their fields, and
// the fields' names to ids, in one pipeline.
func countBucketFields(ctx context.Context, rdb *goredis.Client, keys []string, seed maphash.Seed, ids map[uint64]struct{}, c *keyCount) error {
	if len(keys) == 0 {
		return nil
	}
	cmds, err := rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for _, k := range keys {
			p.HKeys(ctx, k)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, cmd := range cmds {
		fields := cmd.(*goredis.StringSliceCmd).Val()
		if len(fields) == 0 {
			continue
		}
		c.hashes++
		c.fields += int64(len(fields))
		for _, f := range fields {
			ids[maphash.String(seed, f)] = struct{}{}
		}
	}
	return nil
}
