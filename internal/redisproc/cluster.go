package redisproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/edgelimit/edgelimit/internal/freeport"
	"github.com/redis/go-redis/v9"
)

// ClusterNodeTimeout is the default cluster-node-timeout of the nodes
// StartCluster starts: how long a silent node takes to be marked failing.
const ClusterNodeTimeout = 2 * time.Second

// FailoverNodeTimeout is the cluster-node-timeout StartClusterWithReplicas
// uses: a killed master is flagged failing after it, and its replica
// promoted 2 to 3 s after the kill.
const FailoverNodeTimeout = time.Second

// ClusterConfig is the shape of a cluster StartClusterWith launches.
type ClusterConfig struct {
	Masters           int           // at least 3, as redis-cli --cluster create requires
	ReplicasPerMaster int           // 0 = masters only
	NodeTimeout       time.Duration // cluster-node-timeout; 0 = ClusterNodeTimeout
}

// Cluster is a private Redis Cluster: one redis-server process per node on
// free loopback ports, joined as redis-cli --cluster create joins them
// (see join; redis-cli itself is not needed), the 16,384 slots split
// evenly over the masters, each master with ReplicasPerMaster replicas. Nodes run with no persistence and
// cluster-require-full-coverage no, so while one master is down the others
// keep serving their own slots; a replica always fails over for a dead
// master (cluster-replica-validity-factor 0). Its zero value is not
// usable: get one from StartCluster or StartClusterWith and Stop it when
// done.
type Cluster struct {
	mu      sync.Mutex
	nodes   []*Proc
	masters int
}

// StartCluster launches masters (at least 3) cluster-enabled redis-server
// processes with no replicas (see StartClusterWith).
func StartCluster(masters int) (*Cluster, error) {
	return StartClusterWith(ClusterConfig{Masters: masters})
}

// StartClusterWithReplicas launches masters masters with
// replicasPerMaster replicas each and a cluster-node-timeout of
// FailoverNodeTimeout (see StartClusterWith).
func StartClusterWithReplicas(masters, replicasPerMaster int) (*Cluster, error) {
	return StartClusterWith(ClusterConfig{Masters: masters,
		ReplicasPerMaster: replicasPerMaster, NodeTimeout: FailoverNodeTimeout})
}

// StartClusterWith launches cfg's cluster-enabled redis-server processes,
// joins them (the first cfg.Masters nodes are the masters, node
// Masters+k replicates master k mod Masters), and waits until the cluster
// is healthy (see WaitHealthy). It returns ErrNoRedis when redis-server is
// missing.
func StartClusterWith(cfg ClusterConfig) (*Cluster, error) {
	if cfg.Masters < 3 || cfg.ReplicasPerMaster < 0 {
		return nil, fmt.Errorf("redisproc: a cluster needs at least 3 masters and no negative replica count, got %d and %d",
			cfg.Masters, cfg.ReplicasPerMaster)
	}
	if cfg.NodeTimeout <= 0 {
		cfg.NodeTimeout = ClusterNodeTimeout
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoRedis
	}
	var errs []error
	for i := 0; i < launchAttempts; i++ { // fresh ports each time (see launchAttempts)
		c, err := startClusterOnce(bin, cfg)
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// startClusterOnce launches, joins and waits for one cluster on free ports.
func startClusterOnce(bin string, cfg ClusterConfig) (*Cluster, error) {
	c := &Cluster{masters: cfg.Masters}
	if err := c.launch(bin, cfg.Masters*(1+cfg.ReplicasPerMaster), cfg.NodeTimeout); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.join(cfg.Masters); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.WaitHealthy(); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// launch starts count nodes concurrently and waits until each answers PING.
func (c *Cluster) launch(bin string, count int, timeout time.Duration) error {
	c.nodes = make([]*Proc, count)
	errs := make([]error, count)
	var wg sync.WaitGroup
	for i := range c.nodes {
		p, err := newClusterProc(timeout)
		if err != nil {
			return err
		}
		c.nodes[i] = p
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.launch(bin)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// newClusterProc prepares (does not launch) one cluster node: a free client
// port and a free cluster-bus port (set with cluster-port, so it needs no
// port+10000), its own directory holding nodes.conf.
func newClusterProc(timeout time.Duration) (*Proc, error) {
	port, err := freeport.Get()
	if err != nil {
		return nil, err
	}
	bus, err := freeport.Get()
	if err != nil {
		return nil, err
	}
	if bus == port {
		if bus, err = freeport.Get(); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "edgelimit-redis-cluster-")
	if err != nil {
		return nil, err
	}
	p := &Proc{Addr: fmt.Sprintf("127.0.0.1:%d", port), port: port, bus: bus, dir: dir}
	p.args = []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
		"--protected-mode", "no", "--loglevel", "warning",
		"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
		"--cluster-port", strconv.Itoa(bus),
		"--cluster-node-timeout", strconv.FormatInt(timeout.Milliseconds(), 10),
		"--cluster-require-full-coverage", "no", "--cluster-replica-validity-factor", "0",
		"--repl-diskless-sync-delay", "0"}
	return p, nil
}

// Addrs returns the host:port of every node, masters and replicas, in
// start order (the first Masters nodes start as masters; failovers change
// that: see MasterOf and Replica).
func (c *Cluster) Addrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, len(c.nodes))
	for i, p := range c.nodes {
		out[i] = p.Addr
	}
	return out
}

// Masters is the number of masters (shards) the cluster was created with.
func (c *Cluster) Masters() int { return c.masters }

// Node returns node i's process (Addr, Kill, Restart); prefer the
// Cluster's Kill and Restart, which also keep track of the cluster's state.
func (c *Cluster) Node(i int) *Proc { return c.nodes[i] }

// Options returns cluster client options seeded with every node, with
// short dial and read timeouts suited to tests; change them before use.
func (c *Cluster) Options() *redis.ClusterOptions {
	return &redis.ClusterOptions{Addrs: c.Addrs(),
		DialTimeout: 500 * time.Millisecond, ReadTimeout: 2 * time.Second,
		WriteTimeout: 2 * time.Second}
}

// Client returns a new cluster client (Options()); close it when done.
func (c *Cluster) Client() *redis.ClusterClient {
	return redis.NewClusterClient(c.Options())
}

// Kill stops node i at once (SIGKILL), keeping its nodes.conf, so Restart
// brings the same node (same id) back, empty. A killed master's slots are
// unserved until it is back or, with replicas, until the cluster promotes
// one of them (about two NodeTimeouts; WaitHealthy waits for that); the
// other masters keep serving theirs.
func (c *Cluster) Kill(i int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[i].Kill()
}

// Restart starts node i again after Kill and waits until the cluster is
// healthy (WaitHealthy). A master whose replica was promoted meanwhile
// rejoins as a replica of the new master and copies its data.
func (c *Cluster) Restart(i int) error {
	c.mu.Lock()
	err := c.nodes[i].Restart()
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return c.WaitHealthy()
}

// WaitHealthy waits until every running node reports cluster_state:ok,
// all 16,384 slots served, none by a failing node, and as many known nodes
// as the cluster has; sees no slot served by a stopped node; and, when it
// is a replica, is linked to its master. After killing a master with
// replicas it returns once a replica is promoted. It asks every running
// node once a round, pollPause apart, and gives up with the last
// unhealthy answer after pollRounds rounds (a bound in the nodes' answers,
// which a loaded machine slows down with the cluster, not in wall time).
func (c *Cluster) WaitHealthy() error {
	var last error
	for range pollRounds {
		if last = c.healthy(); last == nil {
			return nil
		}
		time.Sleep(pollPause)
	}
	return fmt.Errorf("redis cluster not healthy after %d rounds: %w", pollRounds, last)
}

func (c *Cluster) healthy() error {
	live, stopped := c.split()
	for _, addr := range live {
		if err := nodeHealthy(addr, len(c.nodes), stopped); err != nil {
			return fmt.Errorf("%s: %w", addr, err)
		}
	}
	return nil
}

// split returns the addresses of the running nodes and the set of the
// stopped ones.
func (c *Cluster) split() (live []string, stopped map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	stopped = map[string]bool{}
	for _, p := range c.nodes {
		if p.cmd == nil {
			stopped[p.Addr] = true
		} else {
			live = append(live, p.Addr)
		}
	}
	return live, stopped
}

// nodeInfo returns the CLUSTER INFO of the node at addr as key/value.
func nodeInfo(addr string) (map[string]string, error) {
	cl, ctx, done := nodeClient(addr)
	defer done()
	s, err := cl.ClusterInfo(ctx).Result()
	if err != nil {
		return nil, err
	}
	return parseInfo(s), nil
}

// Stop kills every node and removes their directories. It is safe to call
// more than once.
func (c *Cluster) Stop() error {
	var errs []error
	for _, p := range c.nodes {
		if p != nil {
			errs = append(errs, p.Stop())
		}
	}
	return errors.Join(errs...)
}
