package report

import (
	"encoding/json"
	"io"

	"github.com/edgelimit/edgelimit/sim/engine"
)

// Report is one pop-sim run: the sizes it ran with and one Result per mode,
// plus the sweep's points when a sweep ran.
type Report struct {
	Scenario       string          `json:"scenario"`
	Seed           uint64          `json:"seed"`
	PoPs           int             `json:"pops"`
	Identities     int             `json:"identities"`
	Requests       int             `json:"requests"`
	Limit          int64           `json:"limit"`
	WindowMs       int64           `json:"window_ms"`
	SyncIntervalMs int64           `json:"sync_interval_ms"`
	Margin         float64         `json:"margin"`
	ClockSkewMs    int64           `json:"clock_skew_ms"` // PoP clocks spread over ±this
	Network        string          `json:"network"`       // honest or ideal (see engine.Env.Network)
	Jitter         float64         `json:"jitter"`        // honest: mean jitter of a one-way delay, a fraction of its base
	Results        []engine.Result `json:"results"`
	Sweep          []Point         `json:"sweep,omitempty"`
	Notes          []string        `json:"notes,omitempty"`
}

// Point is one run of a sweep: Mode (a hybrid mode) with Param set to
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
