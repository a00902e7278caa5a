package redisproc

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterSlots is the number of hash slots of a Redis Cluster.
const clusterSlots = 16384

// pollRounds bounds join's and WaitHealthy's waits: that many rounds of
// asking every running node, pollPause apart. A round waits for the nodes'
// answers, so on a loaded machine a round takes longer and the bound
// lasts longer with it (on a quiet machine, at least a minute): a count of
// the nodes' answers bounds the wait, not the wall clock, which a
// starved machine spends without the cluster getting a turn.
const pollRounds = 3000

// pollPause is the pause between two rounds of join and WaitHealthy.
const pollPause = 20 * time.Millisecond

// join makes the launched nodes one cluster, as redis-cli --cluster create
// does but without its unbounded wait: each node takes its own config
// epoch (1, 2, …, so no epoch collision is left to resolve), node i of
// the first masters serves the i-th even share of the slots, and every
// node meets every other. A node still missing a peer is told to meet it
// again each round: a handshake that a starved node did not complete
// within its cluster-node-timeout is dropped and never retried, which
// left redis-cli waiting for the cluster to join forever. Once all nodes
// know each other, node masters+k replicates master k mod masters.
func (c *Cluster) join(masters int) error {
	ctx := context.Background()
	n := len(c.nodes)
	clients := make([]*redis.Client, n)
	for i, p := range c.nodes {
		clients[i] = redis.NewClient(&redis.Options{Addr: p.Addr, MaxRetries: -1})
		defer clients[i].Close()
	}
	ids := make([]string, n)
	for i, cl := range clients {
		if err := cl.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			return fmt.Errorf("%s: CLUSTER SET-CONFIG-EPOCH: %w", c.nodes[i].Addr, err)
		}
		id, err := cl.ClusterMyID(ctx).Result()
		if err != nil {
			return fmt.Errorf("%s: CLUSTER MYID: %w", c.nodes[i].Addr, err)
		}
		ids[i] = id
	}
	for i := range masters {
		args := []any{"CLUSTER", "ADDSLOTS"}
		for s := i * clusterSlots / masters; s < (i+1)*clusterSlots/masters; s++ {
			args = append(args, s)
		}
		if err := clients[i].Do(ctx, args...).Err(); err != nil {
			return fmt.Errorf("%s: CLUSTER ADDSLOTS: %w", c.nodes[i].Addr, err)
		}
	}
	if err := c.meetAll(ctx, clients, ids); err != nil {
		return err
	}
	for r := masters; r < n; r++ {
		if err := clients[r].ClusterReplicate(ctx, ids[(r-masters)%masters]).Err(); err != nil {
			return fmt.Errorf("%s: CLUSTER REPLICATE: %w", c.nodes[r].Addr, err)
		}
	}
	return nil
}

// meetAll tells every node to meet each peer it does not know yet (known:
// listed by CLUSTER NODES under the peer's id, its handshake done), round
// after round, until every node knows every other, for at most pollRounds
// rounds.
func (c *Cluster) meetAll(ctx context.Context, clients []*redis.Client, ids []string) error {
	var last error
	for range pollRounds {
		last = nil
		for i, cl := range clients {
			known, err := knownIDs(ctx, cl)
			if err != nil {
				last = fmt.Errorf("%s: CLUSTER NODES: %w", c.nodes[i].Addr, err)
				continue
			}
			for j, p := range c.nodes {
				if j == i || known[ids[j]] {
					continue
				}
				last = fmt.Errorf("%s does not know %s yet", c.nodes[i].Addr, p.Addr)
				if err := cl.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", p.port, p.bus).Err(); err != nil {
					return fmt.Errorf("%s: CLUSTER MEET %s: %w", c.nodes[i].Addr, p.Addr, err)
				}
			}
		}
		if last == nil {
			return nil
		}
		time.Sleep(pollPause)
	}
	return fmt.Errorf("redis cluster nodes did not all meet in %d rounds: %w", pollRounds, last)
}

// knownIDs returns the ids CLUSTER NODES lists at cl, handshakes left out.
func knownIDs(ctx context.Context, cl *redis.Client) (map[string]bool, error) {
	s, err := cl.ClusterNodes(ctx).Result()
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && !strings.Contains(f[2], "handshake") {
			known[f[0]] = true
		}
	}
	return known, nil
}
