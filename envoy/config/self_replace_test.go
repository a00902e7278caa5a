package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseRefusesASelfReplacingRule: a rule that replaces its own
// rate_limit's name would never limit anything (every descriptor it
// matches is replaced by itself); like envoyproxy/ratelimit, the file is
// refused, in either place replaces may be written. It catches the rule
// loaded silently and enforcing nothing.
func TestParseRefusesASelfReplacingRule(t *testing.T) {
	for _, rule := range []string{
		"    rate_limit: {unit: second, requests_per_unit: 1, name: a}\n    replaces: [{name: a}]\n",
		"    rate_limit: {unit: second, requests_per_unit: 1, name: a, replaces: [{name: a}]}\n",
	} {
		d, err := Parse("rules.yaml", []byte("domain: d\ndescriptors:\n  - key: k\n"+rule), Options{})
		require.Error(t, err, rule)
		assert.Nil(t, d)
		assert.ErrorIs(t, err, ErrBadValue, rule)
		assert.Contains(t, err.Error(), "replaces its own name", rule)
	}
}
