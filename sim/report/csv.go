package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/edgelimit/edgelimit/sim/engine"
)

// WriteCSV writes the sweep's points, one line each led by its mode, with a
// header line, then each of refs (modes run once, as the plot's reference
// points) as a line with param and value empty; round_trips_saved_pct is
// empty where it does not apply (the reference:
// engine.Result.SavesRoundTrips).
func WriteCSV(w io.Writer, pts []Point, refs []engine.Result) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"mode", "param", "value", "decision_error_pct", "round_trips_saved_pct",
		"false_allows", "false_denies", "max_overadmission", "p99_overadmission",
		"redis_round_trips", "nats_messages", "nats_bytes", "added_latency_p50_ms", "added_latency_p99_ms",
		"quota_served_pct", "under_admission_pct", "beyond_limit_units", "wrongly_limited",
		"wrongly_limited_units", "rate_error_mean_pct", "rate_error_p99_pct", "contested"})
	line := func(mode, param, value string, r engine.Result) {
		savedPct := ""
		if r.SavesRoundTrips() {
			savedPct = g(r.RoundTripsSavedPct)
		}
		cw.Write([]string{mode, param, value, g(r.DecisionErrorPct), savedPct,
			i(r.FalseAllows), i(r.FalseDenies), g(r.MaxOveradmission), g(r.P99Overadmission),
			i(r.RedisRoundTrips), i(r.NATSMessages), i(r.NATSBytes),
			g(r.AddedLatencyP50Ms), g(r.AddedLatencyP99Ms),
			g(r.QuotaServedPct), g(r.UnderAdmissionPct), i(r.BeyondLimitUnits), i(r.WronglyLimited),
			i(r.WronglyLimitedUnits), g(r.RateErrorMeanPct), g(r.RateErrorP99Pct), i(r.Contested)})
	}
	for _, p := range pts {
		line(p.Mode, p.Param, p.Value, p.Result)
	}
	for _, r := range refs {
		line(r.Mode, "", "", r)
	}
	cw.Flush()
	return cw.Error()
}

func g(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func i(v int64) string { return strconv.FormatInt(v, 10) }
