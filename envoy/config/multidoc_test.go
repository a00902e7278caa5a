package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseRefusesASecondDocument: a file holds one domain; a second YAML
// document in it (after "---"), whose rules would otherwise be dropped
// without a word, is refused with ErrSyntax naming its line. A lone
// document marker or a trailing "---" with nothing after it still loads.
// It catches the second document's domain silently left unenforced.
func TestParseRefusesASecondDocument(t *testing.T) {
	one := "domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1}\n"
	d, err := Parse("r.yaml", []byte(one+"---\ndomain: b\n"), Options{})
	require.Error(t, err)
	assert.Nil(t, d)
	assert.ErrorIs(t, err, ErrSyntax)
	assert.Contains(t, err.Error(), "r.yaml:6:")
	assert.Contains(t, err.Error(), "one domain")

	for _, ok := range []string{"---\n" + one, one + "---\n", one + "...\n"} {
		d, err := Parse("r.yaml", []byte(ok), Options{})
		require.NoError(t, err, "%q", ok)
		assert.Equal(t, "a", d.Name)
	}
}
