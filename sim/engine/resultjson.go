package engine

import "encoding/json"

// SavesRoundTrips reports whether r's RoundTripsSavedPct applies: false
// for the reference's row, which decides with no Redis at all (no
// deployment it stands for saves or pays a round trip), so its saving
// against pure Redis is not a figure; true for every mode, local's 100%
// included (a deployment that asks Redis nothing).
func (r Result) SavesRoundTrips() bool { return r.Mode != ReferenceMode }

// MarshalJSON writes r with its JSON names, round_trips_saved_pct null
// where it does not apply (SavesRoundTrips; it then comes last). Decoding
// the null leaves RoundTripsSavedPct 0.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result // Result's fields without this method
	if r.SavesRoundTrips() {
		return json.Marshal(plain(r))
	}
	return json.Marshal(struct {
		plain
		RoundTripsSavedPct *float64 `json:"round_trips_saved_pct"`
	}{plain: plain(r)})
}
