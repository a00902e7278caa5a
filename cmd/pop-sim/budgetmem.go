package main

import (
	"context"
	"hash/maphash"
	"regexp"
	"strconv"
	"strings"

	goredis "github.com/redis/go-redis/v9"
)

// budgetPattern matches every key of the budget layout (sync/budget) in
// namespace ns: "{ns:10/1s:g<group>}:..." (the hash tag holds the limit,
// budget.Keyspace; bucket hashes, retry guards, hot sets), which the
// "ns:*" pattern of the other modes misses.
func budgetPattern(ns string) string { return "{" + ns + ":*" }

// budgetBucket matches a budget bucket hash's key,
// "{ns:10/1s:g<g>}:b<b>:e<e>",
// and captures its epoch e
// (one hash per bucket and epoch of two windows).
var budgetBucket = regexp.MustCompile(`^\{[^{}]*:g[0-9]+\}:b[0-9]+:e(-?[0-9]+)$`)

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

// runClock is the run's clock at its end, for expireBudgetKeys: Redis
// expires keys by its own clock, which a run in virtual time outpaces
// (mixed's 60 s of trace take about 35 s of wall time at 1,000,000
// identities), and the simulator's keys carry a slack of the whole run
// plus an hour so none expires while the run needs it (engine's
// expirySlack). Without this, Redis at the end still holds every epoch's
// hashes the run wrote, and the budget layout, whose identity gets a field
// per epoch, looks as if each identity held state in every window it ever
// had (at 1,000,000 identities and 2,000,000 requests: 90,505 fields for
// 36,524 identities, 84 B per identity, against at most two live epochs in
// production).
type runClock struct {
	end    int64 // ms: the trace's last instant by the slowest PoP's clock
	window int64 // ms
	slack  int64 // ms: the budget limiter's own default expiry slack
	// redisSlack is backends/redis' default expiry slack (its default
	// timeout), ms: a pure-Redis key of window i lives until (i+2)·window
	// plus it.
	redisSlack int64
}

// expiredSliding reports whether Redis, its clock at c.end, would have
// expired a pure-Redis key (lua/sliding.lua: value "i:cur:prev", TTL to
// (i+2)·window + slack).
func (c runClock) expiredSliding(value string) bool {
	i, _, ok := strings.Cut(value, ":")
	x, err := strconv.ParseInt(i, 10, 64)
	return ok && err == nil && (x+2)*c.window+c.redisSlack <= c.end
}

// expireSlidingKeys deletes the pure-Redis keys of namespace ns
// ("ns:{id}:s:10/1s") that a Redis on the run's clock would no longer hold, and
// returns how many it deleted.
func expireSlidingKeys(ctx context.Context, rdb *goredis.Client, ns string, c runClock) (int64, error) {
	var n int64
	seen := map[uint64]struct{}{}
	err := scanFresh(ctx, rdb, ns+":*", maphash.MakeSeed(), seen, func(fresh []string) error {
		if len(fresh) == 0 {
			return nil
		}
		cmds, _ := rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for _, k := range fresh {
				p.Get(ctx, k)
			}
			return nil
		})
		var dead []string
		for i, cmd := range cmds {
			if v, err := cmd.(*goredis.StringCmd).Result(); err == nil && c.expiredSliding(v) {
				dead = append(dead, fresh[i])
			}
		}
		if len(dead) == 0 {
			return nil
		}
		d, err := rdb.Del(ctx, dead...).Result()
		n += d
		return err
	})
	return n, err
}

// budgetHot matches a budget hot set of window x, or its order counter:
// "{ns:10/1s:g<g>}:hz:<x>", "{ns:10/1s:g<g>}:hz:<x>:n".
var budgetHot = regexp.MustCompile(`^\{[^{}]*:g[0-9]+\}:hz:(-?[0-9]+)(:n)?$`)

// expired reports whether Redis, its clock at c.end, would have expired
// key of the budget layout by the expiries lua/budget.lua sets (with the
// budget limiter's default slack, not the simulator's): a bucket hash of
// epoch e at (2e+4)·window + slack, a hot set of window x and its counter
// at most at (x+3)·window + slack (2 windows + slack after its last write,
// made within window x). The retry guards and announcements are not
// per identity and stay.
func (c runClock) expired(key string) bool {
	if m := budgetBucket.FindStringSubmatch(key); m != nil {
		e, err := strconv.ParseInt(m[1], 10, 64)
		return err == nil && (2*e+4)*c.window+c.slack <= c.end
	}
	if m := budgetHot.FindStringSubmatch(key); m != nil {
		x, err := strconv.ParseInt(m[1], 10, 64)
		return err == nil && (x+3)*c.window+c.slack <= c.end
	}
	return false
}

// expireBudgetKeys deletes the keys of namespace ns's budget layout that
// c.expired says a Redis on the run's clock would no longer hold, and
// returns how many it deleted. DEL, not UNLINK: used_memory is read right
// after, and UNLINK may free a value later, in the background.
func expireBudgetKeys(ctx context.Context, rdb *goredis.Client, ns string, c runClock) (int64, error) {
	var dead []string
	seen := map[uint64]struct{}{}
	err := scanFresh(ctx, rdb, budgetPattern(ns), maphash.MakeSeed(), seen, func(fresh []string) error {
		for _, k := range fresh {
			if c.expired(k) {
				dead = append(dead, k)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	var n int64
	for len(dead) > 0 {
		page := dead[:min(len(dead), scanCount)]
		dead = dead[len(page):]
		cmds, err := rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for _, k := range page {
				p.Del(ctx, k)
			}
			return nil
		})
		if err != nil {
			return n, err
		}
		for _, cmd := range cmds {
			n += cmd.(*goredis.IntCmd).Val()
		}
	}
	return n, nil
}
