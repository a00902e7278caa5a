package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseFlags: any command line either fails to parse with an error or
// yields options every later stage can trust (positive sizes, a positive
// sync interval, a known mode); it never panics.
func FuzzParseFlags(f *testing.F) {
	for _, s := range []string{
		"", "-pops 8", "-window 0s", "-limit -1",
		"-sweep clock-skew=0,1s", "-sweep sync-interval=10ms -plot x.png",
		"-mode budget -clock-skew 2s", "-scenario article -requests 10", "-network ideal -mode budget",
		"-redis-addr a:1,b:2", "-mode redis,budget,budget-gossip -sweep sync-interval=10ms,1s", "-sync-interval -1ms", "-rtt-min 10ms -rtt-max 5ms",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		o, err := parseFlags(strings.Fields(line))
		if err != nil {
			return
		}
		c := o.cfg
		require.False(t, c.PoPs <= 0 || c.Identities <= 0 || c.Requests <= 0 || c.Limit <= 0 || c.Window <= 0,
			"%q: accepted non-positive sizes %+v", line, c)
		require.False(t, o.syncInterval <= 0 || o.clockSkew < 0 || o.rttMin < 0 || o.rttMax < o.rttMin,
			"%q: accepted bad durations", line)
		require.NotEmpty(t, o.modes(), "%q: no mode to run", line)
	})
}
