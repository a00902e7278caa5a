package redis_test

import (
	"context"
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redisproc"
)

// A limit of 3 requests a minute per identity, decided at Redis: every
// AllowN is one EVALSHA of the sliding window script, atomic there, so
// every process on the same Redis shares the count. The clock is a manual
// one so the example can move time; production leaves WithClock out (the
// system clock), or passes WithServerTime to decide on Redis' own clock.
// The fourth request waits until the minute's three have slid out enough:
// a minute and a millisecond, into the next window.
func Example() {
	srv, err := redisproc.Start() // a private redis-server; production passes its own client
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()
	rdb := srv.Client()
	defer rdb.Close()

	clk := core.NewManualClock(time.Unix(1_800_000_000, 0)) // a window's start
	lim, err := redis.New(rdb, core.PerWindow(3, time.Minute), redis.WithClock(clk))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	for range 4 {
		d, err := lim.Allow(ctx, "user:42")
		fmt.Println(d.Allowed, d.Remaining, d.RetryAfter, err)
	}
	// Output:
	// true 2 0s <nil>
	// true 1 0s <nil>
	// true 0 0s <nil>
	// false 0 1m0.001s <nil>
}
