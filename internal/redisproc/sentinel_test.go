package redisproc

import (
	"context"
	"net"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStartSentinel: the Sentinel StartSentinel launches answers and names
// the master it was given under the name it was given. Caught mutation: a
// configuration file the Sentinel does not read (passed after the
// options, where redis-server takes it for nothing), which leaves it
// exiting at start, or a monitor line naming another address.
func TestStartSentinel(t *testing.T) {
	m, err := Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Stop() })
	s, err := StartSentinel(m.Addr, "primary")
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Stop() })
	c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	got, err := c.GetMasterAddrByName(context.Background(), "primary").Result()
	require.NoError(t, err)
	host, port, err := net.SplitHostPort(m.Addr)
	require.NoError(t, err)
	assert.Equal(t, []string{host, port}, got, "the master the Sentinel monitors")
}

// TestStartSentinelBadArgs: a master address without a port or host, and
// an empty name or one holding a space or a newline (which would break the
// configuration file's monitor line), fail with ErrSentinelArgs before
// anything starts (no process: no Proc).
func TestStartSentinelBadArgs(t *testing.T) {
	for _, c := range []struct{ addr, name string }{
		{"127.0.0.1", "m"}, {":6379", "m"}, {"127.0.0.1:", "m"},
		{"127.0.0.1:6379", ""}, {"127.0.0.1:6379", "a b"}, {"127.0.0.1:6379", "a\nsentinel"},
	} {
		p, err := StartSentinel(c.addr, c.name)
		assert.ErrorIs(t, err, ErrSentinelArgs, "%q %q", c.addr, c.name)
		assert.Nil(t, p, "%q %q", c.addr, c.name)
	}
}
