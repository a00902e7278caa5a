package traffic

import (
	"fmt"
	"math"
	"time"
)

// MinRateWindows is the shortest trace, in windows of the limit, that
// Config.Rate may ask for: every class needs a window boundary to burst
// across and room to go over its limit.
const MinRateWindows = 2

// maxDuration bounds a trace sized by Config.Rate.
const maxDuration = 365 * 24 * time.Hour

// Duration is how long c's trace lasts: Windows windows of the limit, or,
// when Rate is set, Requests / (Rate × PoPs) seconds, so the same scenario
// can be played at a small site's rate or at an edge's. Each class keeps its
// rate relative to the limit, so the number of requests per identity grows
// with the trace's windows.
func (c Config) Duration() time.Duration {
	if c.Rate == 0 {
		return Windows * c.Window
	}
	return time.Duration(c.seconds() * float64(time.Second))
}

// seconds is Requests / (Rate × PoPs).
func (c Config) seconds() float64 { return float64(c.Requests) / (c.Rate * float64(c.PoPs)) }

// validateRate checks Rate, and the length of the trace it gives.
func (c Config) validateRate() error {
	switch {
	case c.Rate == 0:
		return nil
	case !(c.Rate > 0) || math.IsInf(c.Rate, 1):
		return fmt.Errorf("rate %g: want a positive number of requests per second per PoP", c.Rate)
	case c.seconds() > maxDuration.Seconds():
		return fmt.Errorf("rate %g gives a trace longer than %s: raise -rate or lower -requests", c.Rate, maxDuration)
	}
	if d := c.Duration(); d < MinRateWindows*c.Window {
		return fmt.Errorf("rate %g per PoP gives a %s trace, shorter than %d windows (%s): lower -rate, raise -requests or shorten -window",
			c.Rate, d, MinRateWindows, MinRateWindows*c.Window)
	}
	return nil
}
