package traffic

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRateOfTheDefaultLengthGivesTheSameTrace: a rate that sizes the trace
// at exactly Windows windows gives the trace of no rate, request for
// request.
func TestRateOfTheDefaultLengthGivesTheSameTrace(t *testing.T) {
	for _, s := range Scenarios {
		c := small(s) // 5000 requests, 4 PoPs, 1s window: 6s at 5000/24 per PoP
		c.Requests = 4800
		want, err := Generate(c)
		require.NoError(t, err)
		c.Rate = 200
		got, err := Generate(c)
		require.NoError(t, err)
		require.False(t, got.Duration != 6*time.Second || traceHash(got) != traceHash(want), "%s: rate 200 gave %s and a different trace, want 6s and the same", s, got.Duration)
	}
}

func TestRateSizesTheDuration(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		want time.Duration
	}{{25, 50 * time.Second}, {500, 2500 * time.Millisecond}, {3, 5000 * time.Second / 12}} {
		for _, s := range Scenarios {
			c := small(s)
			c.Rate = tc.rate
			tr, err := Generate(c)
			require.NoError(t, err, "%s at %g: %v", s, tc.rate, err)
			require.EqualValues(t, tc.want, tr.Duration, "%s at %g: duration %s, want %s", s, tc.rate, tr.Duration, tc.want)
			assert.EqualValues(t, c.Requests, len(tr.Requests), "%s at %g: %d requests, want %d", s, tc.rate, len(tr.Requests), c.Requests)
			for i, r := range tr.Requests {
				require.False(t, r.At < 0 || r.At >= tr.Duration || (i > 0 && r.At < tr.Requests[i-1].At),
					"%s at %g: request %d at %s, out of order or of [0, %s)", s, tc.rate, i, r.At, tr.Duration)
			}
		}
	}
}

// TestRateKeepsAttackersOverTheLimit: at a low rate the trace is long, and
// an attacker still sends at least twice the limit per window (given a
// budget of requests that holds it).
func TestRateKeepsAttackersOverTheLimit(t *testing.T) {
	c := small("mixed")
	c.Requests, c.Rate = 100000, 100 // 250 s, 250 windows; attackers' budget 30000
	tr, err := Generate(c)
	require.NoError(t, err)
	counts, _ := perIdentity(tr)
	windows := tr.Duration.Seconds() / c.Window.Seconds()
	n := counts[0]
	require.False(t, float64(n) < 2*float64(c.Limit)*windows, "first attacker sends %d over %g windows, want at least %g", n, windows, 2*float64(c.Limit)*windows)
}

func TestBadRate(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		want string
	}{
		{-1, "positive"}, {math.NaN(), "positive"}, {math.Inf(1), "positive"},
		{1e6, "shorter than 2 windows"}, {1e-9, "longer than"},
	} {
		c := small("mixed")
		c.Rate = tc.rate
		_, err := Generate(c)
		assert.False(t, err == nil || !strings.Contains(err.Error(), tc.want), "rate %g: error %v, want one saying %q", tc.rate, err, tc.want)
	}
}
