package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// DefaultNamespace prefixes every metric name unless WithNamespace says
// otherwise.
const DefaultNamespace = "edgelimit"

// DefaultDurationBuckets are the latency histogram buckets in seconds when
// WithDurationBuckets is not given: 1 µs to about 262 ms, ×4 each, which
// covers an in-process decision (sub-µs to µs) and a Redis round trip
// (0.1 ms to ms) alike.
var DefaultDurationBuckets = prometheus.ExponentialBuckets(1e-6, 4, 10)

// Option configures a Collector; pass options to New.
type Option func(*config)

type config struct {
	namespace string
	buckets   []float64
	labels    prometheus.Labels
	nodeLabel string
}

func defaultConfig() config {
	return config{namespace: DefaultNamespace, buckets: DefaultDurationBuckets, nodeLabel: "node"}
}

// WithNamespace sets the metric name prefix (default DefaultNamespace); an
// empty ns gives unprefixed names.
func WithNamespace(ns string) Option { return func(c *config) { c.namespace = ns } }

// WithDurationBuckets sets the bucket upper bounds, in seconds, of both
// latency histograms (default DefaultDurationBuckets). They must be sorted
// in increasing order, or New panics as prometheus.NewHistogramVec does.
func WithDurationBuckets(b []float64) Option { return func(c *config) { c.buckets = b } }

// WithConstLabels adds labels with fixed values (for instance
// {"pop": "fra1"}) to every metric of the collector (default none).
func WithConstLabels(l prometheus.Labels) Option { return func(c *config) { c.labels = l } }

// WithNodeLabel names the label that carries AddStats' node (default
// "node"). An empty name drops the label: use it when the collector serves
// one node whose const labels (WithConstLabels, for instance {"pop": "fra1"})
// already say which, so the node's name is not exported twice. Without the
// label, a second node's statistics of the same name collide at scrape
// time; keep one AddStats per collector then.
func WithNodeLabel(name string) Option { return func(c *config) { c.nodeLabel = name } }
