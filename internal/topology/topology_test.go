package topology

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/clientkind"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestAfterErrorThrottles: many concurrent errors within MinInterval ask
// for one reload; an error just before MinInterval has passed does not ask,
// one at MinInterval does; a client that is not a cluster client is never
// reloaded. Time is the injected clock's.
func TestAfterErrorThrottles(t *testing.T) {
	var reloads atomic.Int32
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	r := &Reloader{reload: func(clientkind.Cluster) { reloads.Add(1) }, now: clock.Load}
	cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cc.Close()
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); r.AfterError(cc) }()
	}
	wg.Wait()
	got := reloads.Load()
	require.Equal(t, int32(1), got, "50 errors at once asked for %d reloads, want 1", got)
	clock.Add(int64(MinInterval) - 1)
	require.False(t, r.AfterError(cc), "an error 1 ns before MinInterval asked for a reload (%d in all)", reloads.Load())
	clock.Add(1)
	require.True(t, r.AfterError(cc), "an error after MinInterval asked for no reload (%d in all)", reloads.Load())
	require.Equal(t, int32(2), reloads.Load(), "an error after MinInterval asked for no reload (%d in all)", reloads.Load())
	plain := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	defer plain.Close()
	require.False(t, r.AfterError(plain), "a plain client was reloaded")
}
