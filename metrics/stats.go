package metrics

import "github.com/prometheus/client_golang/prometheus"

// AddStats exports the statistics f returns, as
// edgelimit_node_stat{node=node, stat=<name>}, calling f at every scrape
// (WithNodeLabel renames the node label, or drops it when the collector's
// const labels already name the node).
// Use it for a budget limiter's counters (decisions by source, calls,
// round trips, gossip sent and heard) without this package importing the
// limiter's package:
//
//	c.AddStats("pop-1", func() map[string]float64 { s := node.Stats(); return map[string]float64{...} })
//
// Values are exported as gauges: cumulative counts keep rising, and rate()
// works on them as on counters. f must be safe for concurrent use and
// quick. A second AddStats with the same node replaces the first; a nil f
// removes the node.
func (c *Collector) AddStats(node string, f func() map[string]float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f == nil {
		delete(c.stats, node)
		return
	}
	c.stats[node] = f
}

func (c *Collector) collectStats(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	funcs := make(map[string]func() map[string]float64, len(c.stats))
	for node, f := range c.stats {
		funcs[node] = f
	}
	c.mu.Unlock()
	for node, f := range funcs {
		for name, v := range f() {
			if c.nodeLabel {
				ch <- prometheus.MustNewConstMetric(c.statDesc, prometheus.GaugeValue, v, node, name)
			} else {
				ch <- prometheus.MustNewConstMetric(c.statDesc, prometheus.GaugeValue, v, name)
			}
		}
	}
}
