package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// anchored uses YAML anchors, aliases and a merge key, which
// envoyproxy/ratelimit's loader (yaml.v2) reads.
const anchored = `
domain: d
descriptors:
  - key: a
    rate_limit: &per_minute {unit: minute, requests_per_unit: 10}
  - key: b
    rate_limit: *per_minute
  - &base
    key: c
    shadow_mode: true
    rate_limit: {unit: second, requests_per_unit: 1}
  - <<: *base
    key: e
`

// TestParseReadsAnchorsAndMerges: a rules file that shares blocks through
// anchors, aliases and merge keys ("<<") loads as it does in
// envoyproxy/ratelimit, a field given beside a merge winning over the
// merged one. It catches an alias refused as "got an alias" and "<<"
// refused as an unknown field.
func TestParseReadsAnchorsAndMerges(t *testing.T) {
	d, err := Parse("r.yaml", []byte(anchored), Options{})
	require.NoError(t, err)
	b := d.Match([]Entry{{"b", "x"}})
	require.NotNil(t, b)
	assert.Equal(t, uint32(10), b.RateLimit.RequestsPerUnit)
	assert.Equal(t, Minute, b.RateLimit.Unit)
	e := d.Match([]Entry{{"e", "x"}})
	require.NotNil(t, e, "the merged rule has its own key")
	assert.True(t, e.ShadowMode)
	assert.Equal(t, Second, e.RateLimit.Unit)
	assert.Nil(t, d.Match([]Entry{{"c", "x"}, {"e", "x"}}))
	require.NotNil(t, d.Match([]Entry{{"c", "x"}}), "the anchored rule stays")
}
