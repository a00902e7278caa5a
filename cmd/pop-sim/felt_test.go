package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/edgelimit/edgelimit/sim/engine"
)

// feltKeys are the JSON names of what a mode's decisions cost the
// identities against the reference.
var feltKeys = []string{"quota_served_pct", "under_admission_pct", "beyond_limit_units", "wrongly_limited",
	"wrongly_limited_units", "rate_error_mean_pct", "rate_error_p99_pct", "contested"}

// referenceReport is the JSON report with its reference row.
type referenceReport struct {
	Reference *engine.Result   `json:"reference"`
	Results   []map[string]any `json:"results"`
}

// TestReferenceRowInEveryRun: a run's JSON carries the reference's row
// (no false decision, every quota served), the same whether the modes run
// in this process or each in a process of its own, and every mode's row
// and class rows carry the figures measured against it.
func TestReferenceRowInEveryRun(t *testing.T) {
	var refs []engine.Result
	for _, parallel := range []string{"1", "2"} {
		code, out, errOut := popSim(t, privateRun("-mode", "redis,local", "-parallel", parallel)...)
		require.Zero(t, code, "-parallel %s: exit status; stderr %s", parallel, errOut)
		var r referenceReport
		require.NoError(t, json.Unmarshal([]byte(out), &r), "-parallel %s: the JSON report", parallel)
		require.NotNil(t, r.Reference, "-parallel %s: the report has a reference row", parallel)
		ref := *r.Reference
		assert.Equal(t, engine.ReferenceMode, ref.Mode, "-parallel %s: the reference row's mode", parallel)
		assert.Zero(t, ref.FalseAllows+ref.FalseDenies, "-parallel %s: the reference errs nowhere", parallel)
		assert.Equal(t, 100.0, ref.QuotaServedPct, "-parallel %s: the reference serves its own quota", parallel)
		assert.Positive(t, ref.Contested, "-parallel %s: the trace has contested identities", parallel)
		require.Len(t, r.Results, 2, "-parallel %s: redis and local", parallel)
		for _, res := range r.Results {
			for _, k := range feltKeys {
				assert.Contains(t, res, k, "-parallel %s: %s's row has %s", parallel, res["mode"], k)
			}
			classes, _ := res["classes"].([]any)
			require.NotEmpty(t, classes, "-parallel %s: %s's row is broken down by class", parallel, res["mode"])
			for _, c := range classes {
				assert.Contains(t, c, "quota_served_pct", "-parallel %s: %s's class rows have the felt figures", parallel, res["mode"])
			}
		}
		local := r.Results[1]
		assert.Greater(t, local["quota_served_pct"].(float64), 100.0, "local, each PoP alone, serves more than the reference")
		assert.Positive(t, local["beyond_limit_units"].(float64), "local admits units beyond the limit")
		ref.WallSeconds = 0
		refs = append(refs, ref)
	}
	assert.Equal(t, refs[0], refs[1], "the reference row in process and from a process of its own")
}
