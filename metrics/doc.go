// Package metrics exports edgelimit's behaviour to Prometheus as one
// collector the user registers (prometheus.Collector).
//
// Three feeds fill it, none of which makes the library depend on Prometheus
// unless this package is imported:
//
//   - Wrap decorates any core.Limiter and counts its decisions by limiter
//     name, result (allowed, denied, error) and core.Source (local, redis,
//     cached-deny, fail-open, fail-closed), with a latency histogram.
//   - RedisHook returns a go-redis hook (client.AddHook) that counts Redis
//     round trips — one per command, one per pipeline — with their latency,
//     pipeline sizes and errors.
//   - AddStats takes a function returning a node's counters by name (for
//     instance a hybrid limiter's gossip sent, received and dropped, pending
//     hits, batch sizes) and exports them at every scrape; Fields turns a
//     struct of counters such as hybrid.Stats into that map. So this package
//     never imports the sync packages: it imports core, Prometheus and
//     go-redis only. A hybrid node's live accuracy (hybrid.Config.AuditRate)
//     arrives this way as stat="audit_checked", "audit_false_allows",
//     "audit_false_denies", "audit_dropped", "audit_round_trips" and
//     "audit_errors" (disagreement rate: rate of false allows + false denies
//     over rate of audit_checked), beside the "pending_redis" and
//     "pending_gossip" gauges.
//
// # Metrics
//
// With the default namespace "edgelimit":
//
//	edgelimit_decisions_total{limiter,result,source}          counter
//	edgelimit_decision_duration_seconds{limiter}               histogram
//	edgelimit_redis_roundtrips_total{client,kind}              counter (kind: command, pipeline)
//	edgelimit_redis_roundtrip_duration_seconds{client,kind}    histogram
//	edgelimit_redis_pipeline_commands{client}                  histogram
//	edgelimit_redis_errors_total{client,type}                  counter (type: reply, transport)
//	edgelimit_node_stat{node,stat}                             gauge
//
// A decision that returned an error has result "error" and source
// "fail-open" or "fail-closed" when the limiter said which fail mode it
// applied, "none" otherwise.
package metrics
