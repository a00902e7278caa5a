package topology

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// TestAfterErrorThrottles: many concurrent errors within MinInterval ask
// for one reload; after MinInterval the next error asks again; a client
// that is not a cluster client is never reloaded.
func TestAfterErrorThrottles(t *testing.T) {
	var reloads atomic.Int32
	r := &Reloader{reload: func(*goredis.ClusterClient) { reloads.Add(1) }}
	cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cc.Close()
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); r.AfterError(cc) }()
	}
	wg.Wait()
	if got := reloads.Load(); got != 1 {
		t.Fatalf("50 errors at once asked for %d reloads, want 1", got)
	}
	time.Sleep(MinInterval + 20*time.Millisecond)
	if !r.AfterError(cc) || reloads.Load() != 2 {
		t.Fatalf("an error after MinInterval asked for no reload (%d in all)", reloads.Load())
	}
	plain := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	defer plain.Close()
	if r.AfterError(plain) {
		t.Fatal("a plain client was reloaded")
	}
}
