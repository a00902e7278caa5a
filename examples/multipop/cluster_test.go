package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sync/budget"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPoPRefusesClusterNode: a PoP whose -redis is one node of a real
// Redis Cluster would have its budget calls redirected for every identity
// whose group another node serves, so it refuses to start, with an error
// matching budget.ErrNotClusterClient that names the address, before it
// listens (ctx ends the PoP should it serve instead).
func TestPoPRefusesClusterNode(t *testing.T) {
	_, cl := redistest.Cluster(t)
	node := cl.Node(0).Addr
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	pr, pw := io.Pipe()
	go func() {
		done <- runPoP(ctx, popOptions{name: "pop1", redisAddr: node, port: 0, limit: 10, window: time.Second, pops: 1}, pw)
		pw.Close()
	}()
	go func() { // a PoP that serves prints its ready line: end it
		if b, _ := io.ReadAll(io.LimitReader(pr, 1)); len(b) > 0 {
			t.Error("the PoP served on a plain client of a cluster node")
			cancel()
			_, _ = io.Copy(io.Discard, pr)
		}
	}()
	err := <-done
	require.Error(t, err)
	assert.ErrorIs(t, err, budget.ErrNotClusterClient, "runPoP's error")
	assert.ErrorIs(t, err, core.ErrInvalid, "runPoP's error")
	assert.Contains(t, err.Error(), node, "the error names the address")
}
