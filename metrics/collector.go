package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector holds edgelimit's metrics. Register it once
// (prometheus.MustRegister(c)); feed it with Wrap, RedisHook and AddStats.
// It is safe for concurrent use. The zero value is not usable; build one
// with New.
type Collector struct {
	decisions    *prometheus.CounterVec
	peeks        *prometheus.CounterVec
	decisionDur  *prometheus.HistogramVec
	decisionErrs *prometheus.CounterVec
	roundTrips   *prometheus.CounterVec
	roundDur     *prometheus.HistogramVec
	pipeSize     *prometheus.HistogramVec
	redisErrs    *prometheus.CounterVec
	statDesc     *prometheus.Desc
	nodeLabel    bool // statDesc has the node label (WithNodeLabel)

	mu    sync.Mutex
	stats map[string]func() map[string]float64
}

var _ prometheus.Collector = (*Collector)(nil)

// New returns an empty Collector. It panics only on buckets that
// prometheus refuses (see WithDurationBuckets).
func New(opts ...Option) *Collector {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	c := &Collector{stats: map[string]func() map[string]float64{}}
	c.initDecisionMetrics(cfg)
	c.initRedisMetrics(cfg)
	statLabels := []string{cfg.nodeLabel, "stat"}
	if cfg.nodeLabel == "" {
		statLabels = statLabels[1:]
	}
	c.statDesc = prometheus.NewDesc(prometheus.BuildFQName(cfg.namespace, "node", "stat"),
		"A limiter node's own statistic (see AddStats), read at scrape time.",
		statLabels, cfg.labels)
	c.nodeLabel = cfg.nodeLabel != ""
	return c
}

func (c *Collector) initDecisionMetrics(cfg config) {
	c.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: cfg.namespace, Name: "decisions_total", ConstLabels: cfg.labels,
		Help: "Rate-limit decisions by limiter, result (allowed, denied) and source, including those made while the store was down.",
	}, []string{"limiter", "result", "source"})
	c.peeks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: cfg.namespace, Name: "peeks_total", ConstLabels: cfg.labels,
		Help: "Peeks (nothing counted) by limiter, result (allowed, denied) and source; the middleware denies a request on a denying peek without any AllowN.",
	}, []string{"limiter", "result", "source"})
	c.decisionErrs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: cfg.namespace, Name: "decision_errors_total", ConstLabels: cfg.labels,
		Help: "Errors of rate-limit calls by limiter and type: unavailable (store down; a decision came with it), invalid (bad input), other, canceled (the caller's context was cancelled: no outage).",
	}, []string{"limiter", "type"})
	c.decisionDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: cfg.namespace, Name: "decision_duration_seconds", ConstLabels: cfg.labels,
		Help: "Time a limiter took to decide, in seconds.", Buckets: cfg.buckets,
	}, []string{"limiter"})
}

func (c *Collector) initRedisMetrics(cfg config) {
	c.roundTrips = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: cfg.namespace, Subsystem: "redis", Name: "roundtrips_total", ConstLabels: cfg.labels,
		Help: "Redis round trips: one per command (kind=command) or pipeline (kind=pipeline).",
	}, []string{"client", "kind"})
	c.roundDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: cfg.namespace, Subsystem: "redis", Name: "roundtrip_duration_seconds", ConstLabels: cfg.labels,
		Help: "Duration of Redis round trips, in seconds.", Buckets: cfg.buckets,
	}, []string{"client", "kind"})
	c.pipeSize = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: cfg.namespace, Subsystem: "redis", Name: "pipeline_commands", ConstLabels: cfg.labels,
		Help: "Commands per Redis pipeline.", Buckets: prometheus.ExponentialBuckets(1, 2, 11),
	}, []string{"client"})
	c.redisErrs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: cfg.namespace, Subsystem: "redis", Name: "errors_total", ConstLabels: cfg.labels,
		Help: "Failed Redis round trips: type=reply for an error reply, type=transport for no answer, " +
			"type=noscript for a script Redis had not cached (the caller then sends it), type=canceled for a caller that left.",
	}, []string{"client", "type"})
}

// Describe sends the descriptors of every metric the Collector can export.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	c.decisions.Describe(ch)
	c.peeks.Describe(ch)
	c.decisionDur.Describe(ch)
	c.decisionErrs.Describe(ch)
	c.roundTrips.Describe(ch)
	c.roundDur.Describe(ch)
	c.pipeSize.Describe(ch)
	c.redisErrs.Describe(ch)
	ch <- c.statDesc
}

// Collect sends the current value of every metric, calling each AddStats
// function once.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.decisions.Collect(ch)
	c.peeks.Collect(ch)
	c.decisionDur.Collect(ch)
	c.decisionErrs.Collect(ch)
	c.roundTrips.Collect(ch)
	c.roundDur.Collect(ch)
	c.pipeSize.Collect(ch)
	c.redisErrs.Collect(ch)
	c.collectStats(ch)
}
