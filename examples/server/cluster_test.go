package main

import (
	"context"
	"strings"
	"testing"
	"time"

	redisbackend "github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
)

// TestServerRefusesClusterNode: -redis-addr one node of a real Redis
// Cluster: the example's plain client would be redirected for every client
// IP of another node's slots, so run refuses to start, with an error
// matching redis.ErrNotClusterClient that names the address, and never
// listens.
func TestServerRefusesClusterNode(t *testing.T) {
	_, cl := redistest.Cluster(t)
	node := cl.Node(0).Addr
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var out strings.Builder
	go func() {
		done <- run(ctx, options{addr: "127.0.0.1:0", redisAddr: node, max: 3, window: time.Hour, timeout: hang, out: &out}, ready)
	}()
	var err error
	select {
	case url := <-ready:
		assert.Fail(t, "served with a plain client of a cluster node", "at %s", url)
		cancel()
		err = <-done
	case err = <-done:
	}
	assert.ErrorIs(t, err, redisbackend.ErrNotClusterClient, "run's error")
	assert.ErrorIs(t, err, core.ErrInvalid, "run's error")
	if err != nil {
		assert.Contains(t, err.Error(), node, "the error names the address")
	}
	assert.Empty(t, out.String(), "nothing printed: no URL")
}
