package config

import (
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLimitWindowIsExactOrRefused: for every unit and multipliers from 1 to
// 2^32−1, RateLimit.Limit's window is unit_multiplier × unit exactly, or,
// where that exceeds core.MaxWindow, a window core.Limit.Validate refuses
// with core.ErrBadWindow. It catches the product wrapping around int64
// nanoseconds (year × 585 came out as a valid window of about 21 days).
func TestLimitWindowIsExactOrRefused(t *testing.T) {
	maxWindow := big.NewInt(int64(core.MaxWindow))
	for u := Second; u <= Year; u++ {
		for _, m := range []uint32{1, 2, 100, 292, 293, 585, 106_752, 213_504, 153_722_868, math.MaxUint32} {
			rl := RateLimit{Unit: u, Multiplier: m, RequestsPerUnit: 10}
			exact := new(big.Int).Mul(big.NewInt(int64(m)), big.NewInt(int64(u.Duration())))
			lim := rl.Limit()
			if exact.Cmp(maxWindow) <= 0 {
				assert.Equal(t, time.Duration(exact.Int64()), lim.Window, "%d × %s", m, u)
				assert.NoError(t, lim.Validate(), "%d × %s", m, u)
				continue
			}
			assert.ErrorIs(t, lim.Validate(), core.ErrBadWindow, "%d × %s is %s ns, over core.MaxWindow, got window %s", m, u, exact, lim.Window)
		}
	}
}

// TestParseRefusesAWindowPastMaxWindow: a rate_limit whose unit_multiplier
// times its unit exceeds core.MaxWindow is a configuration error naming the
// rate_limit, not a rule enforcing whatever the product wraps to, also with
// requests_per_unit 0 (whose window is its denials' wait). It catches the
// wrap (585 years parsed as a window of about 21 days) and a window left
// unchecked under requests_per_unit 0.
func TestParseRefusesAWindowPastMaxWindow(t *testing.T) {
	for _, rl := range []string{
		"{unit: year, requests_per_unit: 10, unit_multiplier: 585}",
		"{unit: year, requests_per_unit: 10, unit_multiplier: 101}",
		"{unit: minute, requests_per_unit: 10, unit_multiplier: 4294967295}",
		"{unit: year, requests_per_unit: 0, unit_multiplier: 585}",
	} {
		yaml := "domain: d\ndescriptors:\n  - key: a\n    rate_limit: " + rl + "\n"
		d, err := Parse("rules.yaml", []byte(yaml), Options{})
		require.Error(t, err, "%s must be refused", rl)
		assert.Nil(t, d)
		assert.ErrorIs(t, err, ErrBadValue, "%s: %v", rl, err)
		assert.Contains(t, err.Error(), "descriptors[0].rate_limit", "%s: %v", rl, err)
		assert.Contains(t, err.Error(), "cannot be enforced", "%s: %v", rl, err)
	}
}
