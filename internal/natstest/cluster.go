package natstest

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/freeport"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

// Cluster is a NATS cluster of embedded servers joined by routes, each on
// its own free client and cluster port of 127.0.0.1. Any server can be shut
// down and restarted on the same ports; it rejoins the others by itself.
// Get one from StartCluster.
type Cluster struct {
	// Servers are the nodes, in start order; Servers[i].URL is node i's
	// client address.
	Servers []*Server
}

// clusterName names every cluster started here.
const clusterName = "edgelimit-test"

// StartCluster launches n (≥ 2) embedded NATS servers, each with explicit
// routes to all the others, waits until every server has a route to every
// other, and shuts them all down in t.Cleanup. It calls t.Fatal when the
// cluster cannot form.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	require.GreaterOrEqual(t, n, 2, "natstest: a cluster needs at least 2 servers, got %d", n)
	c := &Cluster{Servers: make([]*Server, n)}
	routes := make([]*url.URL, n)
	opts := make([]server.Options, n)
	for i := range opts {
		port, err := freeport.Get()
		require.NoError(t, err, "natstest: no free port")
		cport, err := freeport.Get()
		require.NoError(t, err, "natstest: no free port")
		opts[i] = server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true,
			MaxPayload: 4 << 20, ServerName: fmt.Sprintf("n%d", i),
			Cluster: server.ClusterOpts{Name: clusterName, Host: "127.0.0.1", Port: cport}}
		routes[i] = &url.URL{Scheme: "nats-route", Host: fmt.Sprintf("127.0.0.1:%d", cport)}
	}
	for i := range opts {
		for j, r := range routes {
			if j != i {
				opts[i].Routes = append(opts[i].Routes, r)
			}
		}
		s := &Server{t: t, opts: opts[i], URL: fmt.Sprintf("nats://127.0.0.1:%d", opts[i].Port)}
		c.Servers[i] = s
		s.launch()
		t.Cleanup(s.Shutdown)
	}
	c.WaitRouted(t)
	return c
}

// URLs is every node's client URL, node i first, comma-separated: what
// nats.Connect takes to fail over to the other nodes.
func (c *Cluster) URLs(i int) string {
	urls := []string{c.Servers[i].URL}
	for j, s := range c.Servers {
		if j != i {
			urls = append(urls, s.URL)
		}
	}
	return strings.Join(urls, ",")
}

// Connect returns a client of node i that knows every node (URLs(i), tried
// in that order), so it reconnects to another node when node i stops, with
// ClientOptions; closed in t.Cleanup.
func (c *Cluster) Connect(t testing.TB, i int, extra ...nats.Option) *nats.Conn {
	t.Helper()
	opts := append(ClientOptions(), nats.DontRandomize())
	opts = append(opts, extra...)
	nc, err := nats.Connect(c.URLs(i), opts...)
	require.NoError(t, err, "natstest: connect %s", c.URLs(i))
	t.Cleanup(nc.Close)
	return nc
}

// WaitRouted waits (up to readyWait) until every running server has a
// route to every other running server, and calls t.Fatal otherwise.
func (c *Cluster) WaitRouted(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(readyWait)
	for {
		var running []*server.Server
		for _, s := range c.Servers {
			s.mu.Lock()
			if s.srv != nil {
				running = append(running, s.srv)
			}
			s.mu.Unlock()
		}
		ok := true
		for _, srv := range running {
			ok = ok && srv.NumRemotes() == len(running)-1
		}
		if ok {
			return
		}
		require.False(t, time.Now().After(deadline), "natstest: cluster routes not formed after %s", readyWait)
		// nats-server reports no event when a route forms: poll, bounded
		// by readyWait (a hang only).
		time.Sleep(10 * time.Millisecond)
	}
}

// Restart restarts node i (see Server.Restart) and waits until the cluster
// is fully routed again.
func (c *Cluster) Restart(t testing.TB, i int) {
	t.Helper()
	c.Servers[i].Restart()
	c.WaitRouted(t)
}
