package main

import (
	"context"
	"slices"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"

	"github.com/stretchr/testify/require"
)

// TestDropKeys: on a server of the run's own, a mode's keys go by
// FLUSHALL, or stay after the last mode (the server dies with them); on
// someone else's, only the mode's namespace goes.
func TestDropKeys(t *testing.T) {
	rdb, p := redistest.Client(t)
	ctx := context.Background()
	fill := func() {
		for _, k := range []string{"ns:{a}:s:10/1s", "ns:{b}:s:10/1s", "other"} {
			err := rdb.Set(ctx, k, "1", 0).Err()
			require.NoError(t, err)
		}
	}
	left := func() []string {
		keys, err := rdb.Keys(ctx, "*").Result()
		require.NoError(t, err)
		slices.Sort(keys)
		return keys
	}
	for _, c := range []struct {
		name string
		srv  *servers
		last bool
		want []string
	}{
		{"own server", &servers{redisAddr: p.Addr, proc: p}, false, nil},
		{"own server, last mode", &servers{redisAddr: p.Addr, proc: p}, true, []string{"ns:{a}:s:10/1s", "ns:{b}:s:10/1s", "other"}},
		{"another's server", &servers{redisAddr: p.Addr}, false, []string{"other"}},
		{"another's server, last mode", &servers{redisAddr: p.Addr}, true, []string{"other"}},
	} {
		fill()
		err := c.srv.dropKeys(ctx, false, "ns", c.last)
		require.NoError(t, err, "%s: %v", c.name, err)
		got := left()
		require.True(t, slices.Equal(got, c.want), "%s: left %v, want %v", c.name, got, c.want)
		err = rdb.FlushAll(ctx).Err()
		require.NoError(t, err)
	}
}
