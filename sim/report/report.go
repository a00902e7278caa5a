package report

import (
	"encoding/json"
	"io"

	"github.com/edgelimit/edgelimit/sim/engine"
)

// Report is one pop-sim run: the sizes it ran with and one Result per mode,
// plus the sweep's points when a sweep ran.
type Report struct {
	Scenario       string  `json:"scenario"`
	Seed           uint64  `json:"seed"`
	PoPs           int     `json:"pops"`
	Identities     int     `json:"identities"`
	Requests       int     `json:"requests"`
	Limit          int64   `json:"limit"`
	WindowMs       int64   `json:"window_ms"`
	SyncIntervalMs int64   `json:"sync_interval_ms"`
	ClockSkewMs    int64   `json:"clock_skew_ms"` // PoP clocks spread over ±this
	Network        string  `json:"network"`       // honest or ideal (see engine.Env.Network)
	Jitter         float64 `json:"jitter"`        // honest: mean jitter of a one-way delay, a fraction of its base
	// Reference is the ideal limiter's row on the same trace (one exact
	// sliding log deciding each request at its instant, no network):
	// every mode's quota served, under-admission and rate error are
	// measured against it; nil when not run (the article).
	Reference *engine.Result  `json:"reference,omitempty"`
	Results   []engine.Result `json:"results"`
	Sweep     []Point         `json:"sweep,omitempty"`
	Notes     []string        `json:"notes,omitempty"`
	Run       *Run            `json:"run,omitempty"`
}

// Run is what the whole simulation took: how many of its mode runs ran at
// a time (Parallel; 1: one after the other in one process, sharing one
// Redis; more: each in a simulator process of its own with its own
// Redis), the trace's requests, the wall time from the start of the trace
// to the last mode's end, and the peak resident memory (MiB; 0 when
// unknown): one at a time the highest mode's peak, several at a time the
// sum over every process of the run, its redis-servers included, sampled
// (a mode's row then gives its own process's peak, and its wall time is
// its own while it shared the cores with the others).
type Run struct {
	Parallel    int     `json:"parallel"`
	Requests    int     `json:"-"`
	WallSeconds float64 `json:"wall_seconds"`
	PeakRSSMB   float64 `json:"peak_rss_mb"`
}

// Point is one run of a sweep: Mode (a budget mode) with Param set to
// Value.
type Point struct {
	Mode   string        `json:"mode"`
	Param  string        `json:"param"`
	Value  string        `json:"value"`
	Result engine.Result `json:"result"`
}

// WriteJSON writes v as one indented JSON object and a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
