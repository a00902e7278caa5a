package budget_test

import (
	"context"
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redisproc"
	"github.com/edgelimit/edgelimit/sync/budget"
)

// A PoP's limiter: 100 requests per 10 s per identity, in a deployment of
// 8 PoPs. Once a Sync has taken this PoP's free-credit lease, the first
// unit of a window is its free credit; the next
// is decided at Redis. Once this PoP has seen the identity for a Sync
// interval and a round trip (150 ms at the defaults), a decision at Redis
// also grants budget for its demand, which serves the next request here.
// The clock is a manual one so the example can move time; production
// passes nil (the system clock) and calls Start, which runs the Sync loop
// (left out here: its ticker would make the output depend on timing).
func Example() {
	srv, err := redisproc.Start() // a private redis-server; production passes its own client
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()
	rdb := srv.Client()
	defer rdb.Close()

	clk := core.NewManualClock(time.UnixMilli(1_800_000_001_000)) // 1 s into a window
	lim, err := budget.New(budget.Config{PoP: "fra1", Limit: core.PerWindow(100, 10*time.Second), PoPs: 8}, rdb, clk)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lim.Close(context.Background())

	ctx := context.Background()
	// One Sync (Start runs the first at once): Redis counts this PoP among
	// those that may spend free credit, which it then reserves for.
	if err := lim.Sync(ctx); err != nil {
		fmt.Println(err)
		return
	}
	for i := range 4 {
		if i == 2 {
			clk.Advance(200 * time.Millisecond)
		}
		d, err := lim.Allow(ctx, "user:42")
		fmt.Println(d.Allowed, d.Source, d.Remaining, err)
	}
	// Output:
	// true local 99 <nil>
	// true redis 98 <nil>
	// true redis 97 <nil>
	// true local 96 <nil>
}
