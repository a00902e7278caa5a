package redisproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// errNoLiveNode is returned by MasterOf when no running node answers.
var errNoLiveNode = errors.New("redisproc: no running cluster node answers")

// MasterOf returns the index (as in Node and Addrs) of the node serving
// key's slot as master, as seen by the first running node that answers.
func (c *Cluster) MasterOf(key string) (int, error) {
	live, _ := c.split()
	last := errNoLiveNode
	for _, addr := range live {
		owner, err := slotMaster(addr, key)
		if err != nil {
			last = err
			continue
		}
		for i, a := range c.Addrs() {
			if a == owner {
				return i, nil
			}
		}
		return 0, fmt.Errorf("redisproc: slot of %q served by unknown node %s", key, owner)
	}
	return 0, last
}

// Replica reports whether running node i is a replica (INFO replication
// says role:slave).
func (c *Cluster) Replica(i int) (bool, error) {
	info, err := nodeSection(c.nodes[i].Addr, "replication")
	if err != nil {
		return false, err
	}
	return info["role"] == "slave", nil
}

// Replicas returns the indexes of the running nodes replicating node i.
func (c *Cluster) Replicas(i int) ([]int, error) {
	port := strconv.Itoa(c.nodes[i].port)
	live, _ := c.split()
	var out []int
	for j, addr := range c.Addrs() {
		if j == i || !slices.Contains(live, addr) {
			continue
		}
		info, err := nodeSection(addr, "replication")
		if err != nil {
			return nil, err
		}
		if info["role"] == "slave" && info["master_port"] == port {
			out = append(out, j)
		}
	}
	return out, nil
}

// slotMaster asks the node at addr which master serves key's slot.
func slotMaster(addr, key string) (string, error) {
	cl, ctx, done := nodeClient(addr)
	defer done()
	slot, err := cl.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		return "", err
	}
	shards, err := cl.ClusterShards(ctx).Result()
	if err != nil {
		return "", err
	}
	for _, s := range shards {
		if m, ok := shardMaster(s); ok && shardServes(s, slot) {
			return m, nil
		}
	}
	return "", fmt.Errorf("%s: slot %d of %q unserved", addr, slot, key)
}

// shardServes reports whether slot is in one of the shard's slot ranges.
func shardServes(s redis.ClusterShard, slot int64) bool {
	for _, r := range s.Slots {
		if r.Start <= slot && slot <= r.End {
			return true
		}
	}
	return false
}

// shardMaster returns the host:port of the shard's master (CLUSTER SHARDS
// lists it with role "master"), and false when the shard lists none.
func shardMaster(s redis.ClusterShard) (string, bool) {
	for _, n := range s.Nodes {
		if n.Role == "master" {
			host := n.IP
			if host == "" {
				host = n.Endpoint
			}
			return net.JoinHostPort(host, strconv.FormatInt(n.Port, 10)), true
		}
	}
	return "", false
}

// nodeHealthy checks one running node: cluster_state:ok, every slot served
// and none by a failing node, known nodes as many as want, no slot served
// by a stopped node, and a replica's link to its master up.
func nodeHealthy(addr string, known int, stopped map[string]bool) error {
	info, err := nodeInfo(addr)
	if err != nil {
		return err
	}
	want := map[string]string{"cluster_state": "ok", "cluster_slots_ok": "16384",
		"cluster_slots_pfail": "0", "cluster_slots_fail": "0",
		"cluster_known_nodes": strconv.Itoa(known)}
	for k, v := range want {
		if info[k] != v {
			return fmt.Errorf("%s=%q, want %q", k, info[k], v)
		}
	}
	if err := servedByLive(addr, stopped); err != nil {
		return err
	}
	repl, err := nodeSection(addr, "replication")
	if err != nil {
		return err
	}
	if repl["role"] == "slave" && repl["master_link_status"] != "up" {
		return fmt.Errorf("replica link to its master %q", repl["master_link_status"])
	}
	return nil
}

// servedByLive checks that the node at addr maps no slot to a stopped node.
func servedByLive(addr string, stopped map[string]bool) error {
	if len(stopped) == 0 {
		return nil
	}
	cl, ctx, done := nodeClient(addr)
	defer done()
	shards, err := cl.ClusterShards(ctx).Result()
	if err != nil {
		return err
	}
	for _, s := range shards {
		if m, ok := shardMaster(s); ok && len(s.Slots) > 0 && stopped[m] {
			return fmt.Errorf("slots %v still served by stopped %s", s.Slots, m)
		}
	}
	return nil
}

// nodeSection returns one INFO section of the node at addr as key/value.
func nodeSection(addr, section string) (map[string]string, error) {
	cl, ctx, done := nodeClient(addr)
	defer done()
	s, err := cl.Info(ctx, section).Result()
	if err != nil {
		return nil, err
	}
	return parseInfo(s), nil
}

// nodeClient is a one-shot, no-retry client to one node and a context
// bounding its calls; call done when finished.
func nodeClient(addr string) (*redis.Client, context.Context, func()) {
	cl := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	return cl, ctx, func() { cancel(); cl.Close() }
}

// parseInfo splits "key:value" lines (INFO, CLUSTER INFO).
func parseInfo(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[k] = v
		}
	}
	return out
}
