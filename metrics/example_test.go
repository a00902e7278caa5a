package metrics_test

import (
	"context"
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// Count the decisions of a limiter and expose them with the usual
// promhttp.HandlerFor(reg, promhttp.HandlerOpts{}) on /metrics.
func Example() {
	c := metrics.New()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)

	inner, _ := local.New(core.PerWindow(2, time.Minute))
	l := c.Wrap("api", inner) // use l wherever inner was used
	for i := 0; i < 3; i++ {
		_, _ = l.Allow(context.Background(), "user-42")
	}

	fams, _ := reg.Gather()
	for _, f := range fams {
		if f.GetName() != "edgelimit_decisions_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if v := m.GetCounter().GetValue(); v > 0 {
				fmt.Println(labels(m.GetLabel()), v)
			}
		}
	}
	// Output:
	// limiter=api result=allowed source=local 2
	// limiter=api result=denied source=local 1
}

// Count Redis round trips of a client; a limiter of backends/redis built on
// rdb is then measured too.
func ExampleCollector_RedisHook() {
	c := metrics.New()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	rdb.AddHook(c.RedisHook("main"))
	defer rdb.Close()
}

// Export a node's own statistics, such as a budget limiter's Stats(), without
// this package importing the node's package.
func ExampleCollector_AddStats() {
	c := metrics.New()
	type stats struct{ GossipSent, GossipDropped uint64 } // stands for budget.Stats
	node := func() stats { return stats{GossipSent: 12, GossipDropped: 1} }
	c.AddStats("pop-1", func() map[string]float64 { return metrics.Fields(node()) })

	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	fams, _ := reg.Gather()
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			fmt.Println(f.GetName(), labels(m.GetLabel()), m.GetGauge().GetValue())
		}
	}
	// Output:
	// edgelimit_node_stat node=pop-1 stat=gossip_dropped 1
	// edgelimit_node_stat node=pop-1 stat=gossip_sent 12
}
