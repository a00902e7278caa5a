package redisharness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Cluster is a running Redis Cluster of three masters and no replicas.
// The zero value is not usable; build one with StartCluster.
type Cluster struct {
	Nodes []*Server
	dirs  []string
}

// StartCluster starts three cluster-enabled redis-servers, joins them with
// redis-cli --cluster create, and returns once every node reports
// cluster_state:ok (checked every 20 ms, for at most 30 s: a bound only a
// broken cluster reaches).
func StartCluster() (*Cluster, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoRedis
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, errors.New("redis-cli not found on PATH; install it with: apt-get install -y redis-tools")
	}
	c := &Cluster{}
	for range 3 {
		dir, err := os.MkdirTemp("", "edgelimit-envoy-cluster-")
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.dirs = append(c.dirs, dir)
		s, err := start(bin, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--dir", dir,
			"--cluster-node-timeout", "2000")
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
	}
	args := []string{"--cluster", "create"}
	args = append(args, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		c.Stop()
		return nil, fmt.Errorf("redis-cli --cluster create: %v\n%s", err, out)
	}
	for _, n := range c.Nodes {
		if err := waitClusterOK(n.Addr); err != nil {
			c.Stop()
			return nil, err
		}
	}
	return c, nil
}

func waitClusterOK(addr string) error {
	rc := goredis.NewClient(&goredis.Options{Addr: addr})
	defer rc.Close()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		info, err := rc.ClusterInfo(context.Background()).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			return nil
		}
		if i == 1500 {
			return fmt.Errorf("cluster node %s not ok after 30 s: %v %s", addr, err, info)
		}
		<-tick.C
	}
}

// Addrs lists the nodes' addresses.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Addr
	}
	return out
}

// Stop kills every node and removes their directories.
func (c *Cluster) Stop() {
	for _, n := range c.Nodes {
		n.Stop()
	}
	for _, d := range c.dirs {
		os.RemoveAll(d)
	}
}
