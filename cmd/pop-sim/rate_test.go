package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRateFlagSizesTheTrace(t *testing.T) {
	o, err := parseFlags([]string{"-rate", "400", "-pops", "8", "-requests", "320000"})
	require.NoError(t, err)
	d := o.cfg.Duration()
	require.EqualValues(t, 100*time.Second, d, "duration %s, want 100s", d)
	o, err = parseFlags(nil)
	require.False(t, err != nil || o.cfg.Rate != 0 || o.cfg.Duration() != 60*time.Second, "default: rate %v, duration %s, %v; want unset and 60s", o.cfg.Rate, o.cfg.Duration(), err)
}

func TestBadRateFailsFastWithOneLine(t *testing.T) {
	for _, args := range [][]string{
		{"-rate", "-1"}, {"-rate", "NaN"}, {"-rate", "fast"}, {"-rate", "1e9"},
	} {
		code, out, errOut := popSim(t, args...)
		assert.False(t, code != 2 || out != "" || !strings.HasPrefix(errOut, "pop-sim: ") || strings.Count(errOut, "\n") != 1, "%v: exit %d, stdout %q, stderr %q; want 2, nothing, one line", args, code, out, errOut)
	}
}

func TestRateNoteSaysWhenTheBudgetIsShort(t *testing.T) {
	o, err := parseFlags([]string{"-rate", "40000", "-window", "1s", "-limit", "10", "-requests", "640000", "-identities", "20000"})
	require.NoError(t, err)
	tr, err := o.theTrace()
	require.NoError(t, err)
	note := o.rateNote()
	require.False(t, len(tr.Requests) >= 640000*99/100 || !strings.Contains(note, "raise -identities"), "%d requests, note %q: want a short trace and a note saying so", len(tr.Requests), note)
	o, _ = parseFlags([]string{"-rate", "40000", "-window", "1s", "-limit", "10", "-requests", "640000", "-identities", "100000"})
	tr, _ = o.theTrace()
	require.Len(t, tr.Requests, 640000, "requests of the trace: want all 640000")
	require.NotContains(t, o.rateNote(), "raise", "note %q: want a plain note", o.rateNote())
}
