package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/edgelimit/edgelimit/sim/engine"
)

func sample() Report {
	return Report{Scenario: "mixed", Seed: 1, PoPs: 2, Identities: 3, Requests: 4,
		Results: []engine.Result{{Mode: "redis", Decisions: 4, RedisRoundTrips: 4, RoundTripsPerDecision: 1},
			{Mode: "local", Decisions: 4, RoundTripsSavedPct: 100}},
		Sweep: []Point{{Mode: "budget", Param: "sync-interval", Value: "0", Result: engine.Result{Mode: "budget", DecisionErrorPct: 1, RoundTripsSavedPct: 90}},
			{Mode: "budget", Param: "sync-interval", Value: "0.2", Result: engine.Result{Mode: "budget", DecisionErrorPct: 0.5, RoundTripsSavedPct: 80}}}}
}

func TestTableIsAligned(t *testing.T) {
	var b bytes.Buffer
	rep := sample()
	rep.Reference = &engine.Result{Mode: engine.ReferenceMode, Decisions: 4, Felt: engine.Felt{QuotaServedPct: 100}}
	require.NoError(t, WriteTable(&b, rep))
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	require.Len(t, lines, 14, "want title, header, the reference, 2 modes, 2 sweep points, then the felt section's title, header and 5 rows:\n%s", b.String())
	for _, block := range [][]string{lines[1:7], lines[8:14]} {
		for _, l := range block[1:] {
			assert.Len(t, l, len(block[0]), "row %q not as wide as its header %q", l, block[0])
		}
	}
	assert.True(t, strings.HasPrefix(strings.TrimSpace(lines[2]), "reference "), "the reference's row comes first: %q", lines[2])
	assert.Contains(t, b.String(), "budget sync-interval=0.2", "sweep row labelled")
	assert.Contains(t, lines[7], "against the reference", "the felt section's title")
	for _, h := range feltHeader {
		assert.Contains(t, lines[8], h, "the felt section's header names %q", h)
	}
	assert.Equal(t, []string{"reference", "100.00", "0.00", "0", "0", "0", "0.00", "0.00", "0"}, strings.Fields(lines[9]),
		"the reference's felt row: every quota served, nothing else")
}

func TestCSVAndPlot(t *testing.T) {
	var b bytes.Buffer
	rep := sample()
	rep.Sweep[0].Result.Felt = engine.Felt{QuotaServedPct: 97.5, UnderAdmissionPct: 2.5, BeyondLimitUnits: 3,
		WronglyLimited: 4, WronglyLimitedUnits: 5, RateErrorMeanPct: 6.5, RateErrorP99Pct: 7.5, Contested: 8}
	require.NoError(t, WriteCSV(&b, rep.Sweep, rep.Results))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 5, "csv lines: want header, 2 points, 2 references:\n%s", b.String())
	for k, lead := range []string{"mode,param,value,", "budget,sync-interval,0,", "budget,sync-interval,0.2,", "redis,,,", "local,,,"} {
		assert.True(t, strings.HasPrefix(lines[k], lead), "csv line %d %q, want it led by %q", k, lines[k], lead)
	}
	assert.True(t, strings.HasSuffix(lines[0], ",quota_served_pct,under_admission_pct,beyond_limit_units,wrongly_limited,wrongly_limited_units,rate_error_mean_pct,rate_error_p99_pct,contested"),
		"the header ends with the felt columns: %q", lines[0])
	assert.True(t, strings.HasSuffix(lines[1], ",97.5,2.5,3,4,5,6.5,7.5,8"), "the first point ends with its felt figures: %q", lines[1])
	png := filepath.Join(t.TempDir(), "sweep.png")
	require.NoError(t, WritePlot(png, "test", sample().Sweep, nil))
	data, err := os.ReadFile(png)
	require.NoError(t, err, "reading the plot")
	assert.True(t, bytes.HasPrefix(data, []byte("\x89PNG")), "a PNG written")
}

// TestReferenceSavesNothingShown checks that the reference's row shows
// "-" for round trips saved in the table, an empty cell in the CSV and no
// point on the frontier plot (it decides with no Redis: no saving
// applies), while local's 100 stays. It catches the reference's 0 round
// trips printed as 100% saved.
func TestReferenceSavesNothingShown(t *testing.T) {
	rep := sample()
	rep.Reference = &engine.Result{Mode: engine.ReferenceMode, Decisions: 4, RoundTripsSavedPct: 100, LostHits: -1}
	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, rep))
	lines := strings.Split(b.String(), "\n")
	at := strings.Index(lines[1], "saved %") // the column is right-aligned, its cells no wider than its name
	require.Positive(t, at, "header %q", lines[1])
	cell := func(l string) string { return strings.TrimSpace(l[at : at+len("saved %")]) }
	assert.Equal(t, "-", cell(lines[2]), "the reference's saved %%: %q", lines[2])
	assert.Equal(t, "100.00", cell(lines[4]), "local's saved %%: %q", lines[4])

	b.Reset()
	require.NoError(t, WriteCSV(&b, rep.Sweep, []engine.Result{*rep.Reference, rep.Results[1]}))
	csvLines := strings.Split(b.String(), "\n")
	assert.True(t, strings.HasPrefix(csvLines[3], "reference,,,0,,"), "the reference's CSV line: %q", csvLines[3])
	assert.True(t, strings.HasPrefix(csvLines[4], "local,,,0,100,"), "local's CSV line: %q", csvLines[4])
}
