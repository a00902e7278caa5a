// Package metrics exports edgelimit's behaviour to Prometheus as one
// collector the user registers (prometheus.Collector).
//
// Three feeds fill it, none of which makes the library depend on Prometheus
// unless this package is imported:
//
//   - Wrap decorates any core.Limiter and counts its decisions by limiter
//     name, result (allowed, denied) and core.Source (local, redis,
//     cached-deny, fail-open, fail-closed), its errors by type, and its
//     latency; its peeks apart, in peeks_total (a request the middleware
//     denies on a peek alone shows only there).
//   - RedisHook returns a go-redis hook (client.AddHook) that counts Redis
//     round trips — one per command, one per pipeline — with their latency,
//     pipeline sizes and errors.
//   - AddStats takes a function returning a node's counters by name (for
//     instance a budget limiter's decisions by source, calls, round trips
//     and gossip) and exports them at every scrape; Fields turns a struct
//     of counters such as budget.Stats into that map. So this package
//     never imports the sync packages: it imports core, Prometheus and
//     go-redis only. A budget limiter's Redis outage shows in
//     decision_errors_total{type="unavailable"}: while Redis is down every
//     decision it makes on its view (its fallback, after a failed call or
//     without one) comes with that error; those its free credit, grants or
//     deny cache make do not. Alert on its rate.
//
// # Metrics
//
// With the default namespace "edgelimit":
//
//	edgelimit_decisions_total{limiter,result,source}          counter (result: allowed, denied)
//	edgelimit_peeks_total{limiter,result,source}              counter (Peek: nothing counted)
//	edgelimit_decision_errors_total{limiter,type}              counter (type: unavailable, invalid, other, canceled)
//	edgelimit_decision_duration_seconds{limiter}               histogram
//	edgelimit_redis_roundtrips_total{client,kind}              counter (kind: command, pipeline)
//	edgelimit_redis_roundtrip_duration_seconds{client,kind}    histogram
//	edgelimit_redis_pipeline_commands{client}                  histogram
//	edgelimit_redis_errors_total{client,type}                  counter (type: reply, transport, noscript, canceled)
//	edgelimit_node_stat{node,stat}                             gauge (WithNodeLabel renames or drops node)
//
// During a store outage a limiter still decides and returns its decision
// with an error matching core.ErrUnavailable: that decision is counted by
// what it is (a budget limiter's counted decision on its view as
// allowed/local, then denied/local once its view's count is over; a Redis
// limiter's fail
// modes as allowed/fail-open or denied/fail-closed), and the error in
// decision_errors_total{type="unavailable"}. A call that returned no
// decision (bad input) counts only in decision_errors_total. A caller
// whose context was cancelled (an HTTP client that hung up) is no outage:
// its error (matching context.Canceled) counts as type="canceled" in
// decision_errors_total, and its go-redis calls cut short as
// type="canceled" in redis_errors_total, so alerts on "unavailable" and
// "transport" stay quiet; a deadline that passes while Redis does not
// answer is still "unavailable" and "transport". Series are
// created when they first move, except those Wrap is told (or a
// SourceLister says) the limiter can produce, which start at 0; a series no
// limiter can move (allowed/fail-closed, denied/fail-open,
// allowed/cached-deny) never exists.
package metrics
