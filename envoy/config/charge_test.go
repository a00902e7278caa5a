package config

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChargeField: a descriptor's charge loads as Rule.Charge, on that
// rule alone (its nested rules do not inherit it), and a value that is
// not a boolean is ErrSyntax. It catches the field dropped or inherited.
func TestChargeField(t *testing.T) {
	d, err := Parse("c.yaml", []byte(`domain: d
descriptors:
  - key: tokens
    charge: true
    rate_limit: {unit: minute, requests_per_unit: 1000}
    descriptors:
      - key: user
        rate_limit: {unit: minute, requests_per_unit: 100}
`), Options{})
	require.NoError(t, err)
	r := d.Match([]Entry{{"tokens", "x"}})
	require.NotNil(t, r)
	assert.True(t, r.Charge)
	r = d.Match([]Entry{{"tokens", "x"}, {"user", "u"}})
	require.NotNil(t, r)
	assert.False(t, r.Charge, "a nested rule says charge itself")

	_, err = Parse("c.yaml", []byte(`domain: d
descriptors:
  - key: tokens
    charge: 1
    rate_limit: {unit: minute, requests_per_unit: 1000}
`), Options{})
	assert.True(t, errors.Is(err, ErrSyntax), "%v", err)
}
