package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseRefusesAliasesAndMerges: an alias is refused with ErrSyntax and
// a merge key with ErrUnknownField, as the package doc says, rather than
// read in some way that could differ from envoyproxy/ratelimit's loader
// (its merge order) or expand without bound (an alias cycle, nested
// aliases doubling per level). It catches either read silently.
func TestParseRefusesAliasesAndMerges(t *testing.T) {
	alias := `domain: d
descriptors:
  - key: a
    rate_limit: &rl {unit: minute, requests_per_unit: 10}
  - key: b
    rate_limit: *rl
`
	_, err := Parse("r.yaml", []byte(alias), Options{})
	require.ErrorIs(t, err, ErrSyntax, "an alias")
	merge := `domain: d
descriptors:
  - key: a
    rate_limit: &rl {unit: minute, requests_per_unit: 10}
  - key: b
    rate_limit: {<<: *rl, requests_per_unit: 100}
`
	_, err = Parse("r.yaml", []byte(merge), Options{})
	require.ErrorIs(t, err, ErrUnknownField, "a merge key")
}
