package service

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the service's Prometheus series, in the project's naming:
//
//	edgelimit_envoy_requests_total{domain,code}               code: ok, over_limit, invalid, error, canceled (the caller gave up: no outage)
//	edgelimit_envoy_rule_decisions_total{domain,rule,result}  result: ok, over_limit, shadow_over_limit, quota_over_limit, fail_open, fail_closed, unlimited, replaced, no_rule
//	edgelimit_envoy_config_loads_total{result}                result: ok, error
//	edgelimit_envoy_config_domains                            domains in force, gauge
//	edgelimit_envoy_limiters{kept}                            limiters the backend holds, gauge (PoolCollectors); kept: true (the configuration's), false
//	edgelimit_envoy_limiters_released_total                   limiters released (PoolOptions) (PoolCollectors)
//
// rule is the rate_limit's name, else the rule's YAML path ("(none)" for a
// descriptor no rule matches, "(override)" for one limited by its own
// override only); a rule with
// detailed_metric: true adds the request's values ("path=/a/b"), one series
// per distinct value: as envoyproxy/ratelimit warns for its detailed metrics,
// use it only on descriptors with few values, or Prometheus holds a series
// per client. domain is the request's only when the configuration has it
// (else "unknown"), so clients cannot mint series. The zero value is not
// usable; build with NewMetrics.
type Metrics struct {
	requests    *prometheus.CounterVec
	decisions   *prometheus.CounterVec
	configLoads *prometheus.CounterVec
	rules       prometheus.Gauge
}

// NewMetrics returns the series, registered with reg when it is not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "edgelimit", Subsystem: "envoy", Name: "requests_total",
			Help: "ShouldRateLimit calls by domain and overall code.",
		}, []string{"domain", "code"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "edgelimit", Subsystem: "envoy", Name: "rule_decisions_total",
			Help: "Descriptor decisions by domain, rule and result.",
		}, []string{"domain", "rule", "result"}),
		configLoads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "edgelimit", Subsystem: "envoy", Name: "config_loads_total",
			Help: "Configuration loads and reloads by result.",
		}, []string{"result"}),
		rules: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "edgelimit", Subsystem: "envoy", Name: "config_domains",
			Help: "Domains in the configuration in force.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.decisions, m.configLoads, m.rules)
	}
	return m
}

// ConfigLoaded counts a load or reload; ok tells whether it took effect,
// domains is how many domains are then in force.
func (m *Metrics) ConfigLoaded(ok bool, domains int) {
	if m == nil {
		return
	}
	if ok {
		m.configLoads.WithLabelValues("ok").Inc()
		m.rules.Set(float64(domains))
		return
	}
	m.configLoads.WithLabelValues("error").Inc()
}

// PoolCollectors are b's limiter series (see Metrics), read from b.Pool
// at every scrape, for the caller to register.
func PoolCollectors(b Backend) []prometheus.Collector {
	live := func(kept bool) func() float64 {
		return func() float64 {
			st := b.Pool()
			if kept {
				return float64(st.Kept)
			}
			return float64(st.Live - st.Kept)
		}
	}
	opts := func(kept string) prometheus.GaugeOpts {
		return prometheus.GaugeOpts{Namespace: "edgelimit", Subsystem: "envoy", Name: "limiters",
			Help: "Limiters the backend holds; kept: those of the configuration in force.", ConstLabels: prometheus.Labels{"kept": kept}}
	}
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(opts("true"), live(true)),
		prometheus.NewGaugeFunc(opts("false"), live(false)),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "edgelimit", Subsystem: "envoy", Name: "limiters_released_total",
			Help: "Limiters released: idle, or past the bound, outside the configuration."}, func() float64 { return float64(b.Pool().Released) }),
	}
}
