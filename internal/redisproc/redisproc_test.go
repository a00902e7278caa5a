package redisproc

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStartFailsWhenTheServerExits: a server that exits before it answers
// (here an argument redis-server refuses) is an error naming the exit, at
// each of the ports tried, not a wait for a time limit. Caught mutation:
// waitReady not watching the process (it polled a dead port until its
// time limit, 30 s a port, and said only that the server was not ready).
func TestStartFailsWhenTheServerExits(t *testing.T) {
	p, err := Start("--no-such-directive", "1")
	require.Error(t, err)
	assert.Nil(t, p)
	assert.ErrorContains(t, err, "exited before it answered")
}

// TestKillRestart: Kill stops the server and waits for its exit; Restart
// brings an empty one back on the same address, which waitReady finds
// answering from the new process.
func TestKillRestart(t *testing.T) {
	p, err := Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Stop() })
	c := p.Client()
	defer c.Close()
	ctx := context.Background()
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	require.NoError(t, p.Kill())
	require.Error(t, c.Ping(ctx).Err(), "killed: nothing answers")
	require.NoError(t, p.Restart())
	n, err := c.Exists(ctx, "k").Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the restarted server is empty")
}
