package main

import (
	"context"
	"strings"

	goredis "github.com/redis/go-redis/v9"
)

// scanCount is the COUNT hint of the SCANs that measure and delete a
// mode's keys: keys examined per call, so the calls stay short for Redis.
const scanCount = 1000

// dropKeys deletes the keys of namespace ns after its mode ran: on a
// single redis-server of the run's own (s.proc), which holds nothing but
// the run's keys, by FLUSHALL, or not at all after the last mode (Stop
// kills the server with them: a mode's process of -parallel runs one
// mode); else by clearKeys, which leaves the rest of a -redis-addr server
// or a cluster alone. At a million identities clearKeys' SCAN and UNLINK
// of millions of keys cost both processes seconds of CPU.
func (s *servers) dropKeys(ctx context.Context, cluster bool, ns string, last bool) error {
	switch {
	case s.proc == nil:
		if err := clearKeys(ctx, s.redisAddr, cluster, ns+":*"); err != nil {
			return err
		}
		return clearKeys(ctx, s.redisAddr, cluster, budgetPattern(ns))
	case last:
		return nil
	}
	c := goredis.NewClient(&goredis.Options{Addr: s.redisAddr})
	defer c.Close()
	return c.FlushAll(ctx).Err() // synchronous: the next mode's used_memory starts from the freed server
}

// clearKeys deletes every key matching pattern from the Redis at addrs
// (one address, or a cluster's nodes: then from every master), a SCAN
// page at a time, each page unlinked in one pipeline of single-key
// UNLINKs, which works on a cluster too (no CROSSSLOT). Run after each
// mode, so a -redis-addr server keeps nothing of the run.
func clearKeys(ctx context.Context, addrs string, cluster bool, pattern string) error {
	if !cluster {
		c := goredis.NewClient(&goredis.Options{Addr: addrs})
		defer c.Close()
		return unlinkAll(ctx, c, pattern)
	}
	c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: strings.Split(addrs, ",")})
	defer c.Close()
	return c.ForEachMaster(ctx, func(ctx context.Context, n *goredis.Client) error {
		return unlinkAll(ctx, n, pattern)
	})
}

// unlinkAll scans one node for pattern and unlinks what it finds.
func unlinkAll(ctx context.Context, c *goredis.Client, pattern string) error {
	var cursor uint64
	for {
		page, next, err := c.Scan(ctx, cursor, pattern, scanCount).Result()
		if err != nil {
			return err
		}
		if len(page) > 0 {
			_, err := c.Pipelined(ctx, func(p goredis.Pipeliner) error {
				for _, k := range page {
					p.Unlink(ctx, k)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}
