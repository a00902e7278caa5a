package local_test

import (
	"context"
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/core"
)

// A limit of 3 requests a minute per identity, in this process. The clock
// is a manual one so the example can move time; production leaves
// WithClock out (the system clock). The sliding window counter estimates
// the last minute's requests as this window's count plus the previous
// window's weighted by the part of it still inside the minute, and admits
// a request while that estimate is under the limit (the article's rule):
// 30 s into the next window the previous window's 3 weigh 1.5, so two
// requests pass (at estimates of 1.5 and 2.5) and the third waits until
// the estimate falls under 3 again.
func Example() {
	clk := core.NewManualClock(time.Unix(1_800_000_000, 0)) // a window's start
	lim, err := local.New(core.PerWindow(3, time.Minute), local.WithClock(clk))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	for range 4 {
		d, _ := lim.Allow(ctx, "user:42")
		fmt.Println(d.Allowed, d.Remaining)
	}
	clk.Advance(90 * time.Second)
	for range 3 {
		d, _ := lim.Allow(ctx, "user:42")
		fmt.Println(d.Allowed, d.Remaining, d.RetryAfter)
	}
	// Output:
	// true 2
	// true 1
	// true 0
	// false 0
	// true 1 0s
	// true 0 0s
	// false 0 10.001s
}
