package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// example7 is envoyproxy/ratelimit's own example of replaces, as its
// README gives it: replaces sits inside rate_limit.
const example7 = `
domain: example7
descriptors:
  - key: key_1
    value: value_1
    descriptors:
      - key: user
        value: bkthomps
        rate_limit:
          name: specific_limit
          requests_per_unit: 5
          unit: second
  - key: key_2
    value: value_2
    descriptors:
      - key: user
        value: bkthomps
        rate_limit:
          replaces:
            - name: specific_limit
          requests_per_unit: 10
          unit: second
`

// TestParseReadsReplacesInsideRateLimit: envoyproxy/ratelimit's format
// puts replaces in the rate_limit block; such a file loads unchanged and
// the rule replaces the named limit; replaces given both there and beside
// rate_limit is refused. It catches replaces read only beside
// rate_limit, where envoyproxy/ratelimit's own example is refused as an
// unknown field.
func TestParseReadsReplacesInsideRateLimit(t *testing.T) {
	d, err := Parse("rules.yaml", []byte(example7), Options{})
	require.NoError(t, err)
	r := d.Match([]Entry{{"key_2", "value_2"}, {"user", "bkthomps"}})
	require.NotNil(t, r)
	assert.Equal(t, []string{"specific_limit"}, r.Replaces)

	both := "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1, replaces: [{name: a}]}\n    replaces: [{name: b}]\n"
	_, err = Parse("rules.yaml", []byte(both), Options{})
	assert.ErrorIs(t, err, ErrDuplicate, "replaces in both places")
}
