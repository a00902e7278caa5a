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
// 8 PoPs. The first unit of a window is this PoP's free credit; the next
// one is decided at Redis, whose reply also grants budget for the demand,
// which serves the third here.
func Example() {
	srv, err := redisproc.Start() // a private redis-server; production passes its own client
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()
	rdb := srv.Client()
	defer rdb.Close()

	lim, err := budget.New(budget.Config{PoP: "fra1", Limit: core.PerWindow(100, 10*time.Second), PoPs: 8}, rdb, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	lim.Start()
	defer lim.Close(context.Background())

	ctx := context.Background()
	for range 3 {
		d, err := lim.Allow(ctx, "user:42")
		fmt.Println(d.Allowed, d.Source, d.Remaining, err)
	}
	// Output:
	// true local 99 <nil>
	// true redis 98 <nil>
	// true local 97 <nil>
}
