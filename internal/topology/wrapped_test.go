package topology

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// countingCluster is a user's wrapper of a cluster client (as an
// instrumentation layer would be) that counts the slot-map reloads asked
// of it before passing them on.
type countingCluster struct {
	*goredis.ClusterClient
	reloads *atomic.Int32
}

// ReloadState counts the reload and asks the wrapped client for it.
func (c countingCluster) ReloadState(ctx context.Context) {
	c.reloads.Add(1)
	c.ClusterClient.ReloadState(ctx)
}

// TestAfterErrorWrappedCluster: a Reloader with no injected reload asks a
// type embedding *goredis.ClusterClient for a reload through its own
// ReloadState, throttled as a cluster client's; a type embedding a plain
// *goredis.Client is left alone. Time is the injected clock's. Caught
// mutations: telling a cluster client by its concrete type (the wrapper
// never reloaded after a failed master), calling the embedded client's
// ReloadState rather than the wrapper's, a wrapper of a plain client taken
// for a cluster client.
func TestAfterErrorWrappedCluster(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	r := &Reloader{now: clock.Load}
	cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cc.Close()
	var reloads atomic.Int32
	w := countingCluster{cc, &reloads}
	require.True(t, r.AfterError(w), "the wrapper of a cluster client was not reloaded")
	require.Equal(t, int32(1), reloads.Load(), "reloads asked of the wrapper")
	clock.Add(int64(MinInterval) - 1)
	require.False(t, r.AfterError(w), "an error 1 ns before MinInterval asked for a reload")
	clock.Add(1)
	require.True(t, r.AfterError(w), "an error after MinInterval asked for no reload")
	require.Equal(t, int32(2), reloads.Load(), "reloads asked of the wrapper")

	plain := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	defer plain.Close()
	clock.Add(int64(MinInterval))
	require.False(t, r.AfterError(struct{ *goredis.Client }{plain}), "a wrapper of a plain client was reloaded")
}
