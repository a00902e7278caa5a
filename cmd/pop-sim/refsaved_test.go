package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReferenceRowSavesNoRoundTrips checks that the reference's row,
// which asks Redis nothing, gives no round trips saved, whether the modes
// run in this process or each in a process of its own (whose JSON the
// parent reads back): null in -json, "-" in the table, while local's row
// keeps its 100. It catches the reference's 0 round trips shown as 100%
// saved.
func TestReferenceRowSavesNoRoundTrips(t *testing.T) {
	for _, parallel := range []string{"1", "2"} {
		code, out, errOut := popSim(t, privateRun("-mode", "redis,local", "-parallel", parallel)...)
		require.Zero(t, code, "-parallel %s: exit status; stderr %s", parallel, errOut)
		var r struct {
			Reference map[string]any `json:"reference"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &r), "-parallel %s: the JSON report", parallel)
		require.Contains(t, r.Reference, "round_trips_saved_pct", "-parallel %s: the reference's row", parallel)
		assert.Nil(t, r.Reference["round_trips_saved_pct"], "-parallel %s: the reference's round trips saved", parallel)

		args := privateRun("-mode", "redis,local", "-parallel", parallel, "-json=false")
		code, out, errOut = popSim(t, args...)
		require.Zero(t, code, "-parallel %s, table: exit status; stderr %s", parallel, errOut)
		lines := strings.Split(out, "\n")
		at := strings.Index(lines[1], "saved %") // right-aligned: its cells no wider than its name
		require.Positive(t, at, "-parallel %s: header %q", parallel, lines[1])
		cells := map[string]string{}
		for _, l := range lines[2:5] {
			cells[strings.Fields(l)[0]] = strings.TrimSpace(l[at : at+len("saved %")])
		}
		assert.Equal(t, map[string]string{"reference": "-", "redis": "0.00", "local": "100.00"}, cells,
			"-parallel %s: saved %% by row:\n%s", parallel, out)
	}
}
