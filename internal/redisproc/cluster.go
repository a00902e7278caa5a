package redisproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/edgelimit/edgelimit/internal/freeport"
	"github.com/redis/go-redis/v9"
)

// ErrNoRedisCLI is returned by StartCluster when redis-cli, which joins the
// nodes, is not on PATH.
var ErrNoRedisCLI = errors.New("redis-cli not found on PATH; install it with: apt-get update && apt-get install -y redis-tools (or redis-server)")

// ClusterNodeTimeout is the cluster-node-timeout of every node started by
// StartCluster: how long a silent node takes to be marked failing.
const ClusterNodeTimeout = 2 * time.Second

// clusterReadyWait bounds how long StartCluster and Restart wait for
// cluster_state:ok on every node.
const clusterReadyWait = 20 * time.Second

// Cluster is a private Redis Cluster of masters only (no replicas): one
// redis-server process per master on free loopback ports, joined with
// redis-cli --cluster create, the 16,384 slots split evenly. Nodes run with
// no persistence and cluster-require-full-coverage no, so while one master
// is down the others keep serving their own slots. Its zero value is not
// usable: get one from StartCluster and Stop it when done.
type Cluster struct {
	mu    sync.Mutex
	nodes []*Proc
}

// StartCluster launches masters (at least 3, as redis-cli requires)
// cluster-enabled redis-server processes, joins them, and waits until
// CLUSTER INFO says cluster_state:ok on every node and every node sees all
// slots covered. It returns ErrNoRedis or ErrNoRedisCLI when a binary is
// missing.
func StartCluster(masters int) (*Cluster, error) {
	if masters < 3 {
		return nil, fmt.Errorf("redisproc: a cluster needs at least 3 masters, got %d", masters)
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoRedis
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, ErrNoRedisCLI
	}
	c := &Cluster{}
	errs := make([]error, masters)
	c.nodes = make([]*Proc, masters)
	var wg sync.WaitGroup
	for i := range c.nodes {
		p, err := newClusterProc()
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.nodes[i] = p
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.launch(bin)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.Stop()
		return nil, err
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	cmd := exec.Command(cli, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		c.Stop()
		return nil, fmt.Errorf("redis-cli --cluster create: %w\n%s", err, out)
	}
	if err := c.WaitHealthy(clusterReadyWait); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// newClusterProc prepares (does not launch) one cluster node: a free client
// port and a free cluster-bus port (set with cluster-port, so it needs no
// port+10000), its own directory holding nodes.conf.
func newClusterProc() (*Proc, error) {
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
	p := &Proc{Addr: fmt.Sprintf("127.0.0.1:%d", port), port: port, dir: dir}
	p.args = []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
		"--protected-mode", "no", "--loglevel", "warning",
		"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
		"--cluster-port", strconv.Itoa(bus),
		"--cluster-node-timeout", strconv.FormatInt(ClusterNodeTimeout.Milliseconds(), 10),
		"--cluster-require-full-coverage", "no"}
	return p, nil
}

// Addrs returns the host:port of every master, in start order.
func (c *Cluster) Addrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, len(c.nodes))
	for i, p := range c.nodes {
		out[i] = p.Addr
	}
	return out
}

// Masters is the number of masters.
func (c *Cluster) Masters() int { return len(c.nodes) }

// Node returns master i's process (Addr, Kill, Restart); prefer the
// Cluster's Kill and Restart, which also wait for the cluster's state.
func (c *Cluster) Node(i int) *Proc { return c.nodes[i] }

// Options returns cluster client options seeded with every master, with
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

// Kill stops master i at once (SIGKILL), keeping its nodes.conf, so Restart
// brings the same node (same id and slots) back, empty. Its slots are
// unserved until then; the other masters keep serving theirs.
func (c *Cluster) Kill(i int) error {
	return c.nodes[i].Kill()
}

// Restart starts master i again after Kill and waits until every node says
// cluster_state:ok again.
func (c *Cluster) Restart(i int) error {
	if err := c.nodes[i].Restart(); err != nil {
		return err
	}
	return c.WaitHealthy(clusterReadyWait)
}

// WaitHealthy waits up to limit until every running node reports
// cluster_state:ok, cluster_slots_ok:16384 and as many known nodes as the
// cluster has.
func (c *Cluster) WaitHealthy(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last error
	for {
		if last = c.healthy(); last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis cluster not healthy after %s: %w", limit, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *Cluster) healthy() error {
	for _, addr := range c.Addrs() {
		info, err := nodeInfo(addr)
		if err != nil {
			return fmt.Errorf("%s: %w", addr, err)
		}
		want := map[string]string{"cluster_state": "ok", "cluster_slots_ok": "16384",
			"cluster_slots_pfail": "0", "cluster_slots_fail": "0",
			"cluster_known_nodes": strconv.Itoa(len(c.nodes))}
		for k, v := range want {
			if info[k] != v {
				return fmt.Errorf("%s: %s=%q, want %q", addr, k, info[k], v)
			}
		}
	}
	return nil
}

func nodeInfo(addr string) (map[string]string, error) {
	cl := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	s, err := cl.ClusterInfo(ctx).Result()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[k] = v
		}
	}
	return out, nil
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
