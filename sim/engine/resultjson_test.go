package engine

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReferenceSavedIsNullInJSON checks that the reference's row gives
// round_trips_saved_pct as null (it decides with no Redis: no saving
// applies), while every mode's row, pure Redis' 0 included, gives its
// figure, and that a mode's row decodes back to itself. It catches the
// reference written as 100 (its 0 round trips read as all saved) and a
// MarshalJSON that drops or renames a field.
func TestReferenceSavedIsNullInJSON(t *testing.T) {
	ref := Result{Mode: ReferenceMode, Decisions: 10, RoundTripsSavedPct: 100, Felt: Felt{QuotaServedPct: 100}, LostHits: -1}
	var got map[string]any
	b, err := json.Marshal(ref)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &got))
	require.Contains(t, got, "round_trips_saved_pct", "the reference's row names the column")
	require.Nil(t, got["round_trips_saved_pct"], "the reference's round trips saved: %s", b)
	require.EqualValues(t, 100, got["quota_served_pct"], "Felt's fields stay inline: %s", b)

	for _, r := range []Result{
		{Mode: "redis", Decisions: 10, RedisRoundTrips: 10, RoundTripsPerDecision: 1, LostHits: 3},
		{Mode: "budget", Decisions: 10, RoundTripsSavedPct: 74, Felt: Felt{QuotaServedPct: 99.5, Contested: 2},
			Budget: &BudgetStats{BySource: map[string]uint64{"redis": 3}}, Classes: []ClassResult{{Class: "calm", Waited: 4}}},
	} {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		require.EqualValues(t, r.RoundTripsSavedPct, m["round_trips_saved_pct"], "%s: round trips saved: %s", r.Mode, b)
		var back Result
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, r, back, "%s: decoded", r.Mode)
	}
}
