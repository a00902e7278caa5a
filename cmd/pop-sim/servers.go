package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/edgelimit/edgelimit/internal/redisproc"
	"github.com/edgelimit/edgelimit/sim/natsembed"
	"github.com/nats-io/nats.go"
	goredis "github.com/redis/go-redis/v9"
)

// servers are the Redis and NATS a run uses, and what must be stopped after.
type servers struct {
	redisAddr string // one address, or a comma-separated list of cluster nodes
	natsURL   string
	proc      *redisproc.Proc
	cluster   *redisproc.Cluster
	nats      *natsembed.Server
}

// checkServers fails fast when -redis-addr or -nats-url cannot be reached,
// and finds out whether a single -redis-addr is a Redis Cluster node.
func (o *options) checkServers(ctx context.Context) error {
	if o.redisAddr != "" {
		if err := o.checkRedis(ctx); err != nil {
			return err
		}
	}
	if o.natsURL != "" && o.needsNATS() {
		nc, err := nats.Connect(o.natsURL, nats.Timeout(2*time.Second))
		if err != nil {
			return fmt.Errorf("nats-url %s unreachable: %v", o.natsURL, err)
		}
		nc.Close()
	}
	return nil
}

// checkRedis pings -redis-addr: every listed node of a cluster, or the one
// address, which is taken for a cluster node when its INFO says
// cluster_enabled:1.
func (o *options) checkRedis(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	addrs := strings.Split(o.redisAddr, ",")
	for _, addr := range addrs {
		c := goredis.NewClient(&goredis.Options{Addr: addr, MaxRetries: -1,
			DialTimeout: 2 * time.Second})
		info, err := c.Info(ctx, "cluster").Result()
		c.Close()
		if err != nil {
			return fmt.Errorf("redis-addr %s unreachable: %v", addr, err)
		}
		enabled := strings.Contains(info, "cluster_enabled:1")
		if len(addrs) > 1 && !enabled {
			return fmt.Errorf("redis-addr %s: a list names Redis Cluster nodes, and this one is not", addr)
		}
		o.clusterAddr = enabled
	}
	if o.clusterAddr && o.cfg.Scenario == "article" {
		return errors.New("the article scenario needs a single Redis node (used_memory is per node)")
	}
	return nil
}

// needsNATS reports whether any mode run gossips.
func (o *options) needsNATS() bool {
	if o.cfg.Scenario == "article" {
		return false
	}
	return o.sweep != "" || slices.ContainsFunc(o.modes(), func(m string) bool {
		return strings.HasSuffix(m, "-gossip")
	})
}

// startServers starts what the flags did not name: a private redis-server
// (or, with -redis-cluster, a private 3-master Redis Cluster) and, when a
// mode gossips, an embedded NATS server; none when the modes run several
// at a time, each process starting its own.
func (o *options) startServers() (*servers, error) {
	s := &servers{redisAddr: o.redisAddr, natsURL: o.natsURL}
	if !o.sharesServers() {
		return s, nil // each mode's process starts its own (runApart)
	}
	switch {
	case o.redisCluster:
		c, err := redisproc.StartCluster(3)
		if err != nil {
			return nil, err
		}
		s.cluster, s.redisAddr = c, strings.Join(c.Addrs(), ",")
	case s.redisAddr == "":
		p, err := redisproc.Start()
		if err != nil {
			return nil, err
		}
		s.proc, s.redisAddr = p, p.Addr
		if err := quietServer(context.Background(), p.Addr); err != nil {
			s.stop()
			return nil, err
		}
	}
	if s.natsURL == "" && o.needsNATS() {
		n, err := natsembed.Start()
		if err != nil {
			s.stop()
			return nil, err
		}
		s.nats, s.natsURL = n, n.URL()
	}
	return s, nil
}

// sharesServers reports whether the run's modes share this process's
// servers: the article's tables, or modes run one at a time (workers).
func (o *options) sharesServers() bool {
	if o.cfg.Scenario == "article" {
		return true
	}
	jobs, _ := o.planJobs()
	return o.workers(len(jobs)) == 1
}

func (s *servers) stop() {
	if s.nats != nil {
		s.nats.Stop()
	}
	if s.proc != nil {
		s.proc.Stop()
	}
	if s.cluster != nil {
		s.cluster.Stop()
	}
}

// namespace is a fresh key and subject prefix for one run of one mode, so
// runs sharing a Redis or NATS never see each other's state.
func namespace(mode string) string {
	return fmt.Sprintf("popsim-%x-%s", time.Now().UnixNano(), strings.ReplaceAll(mode, "-", ""))
}
