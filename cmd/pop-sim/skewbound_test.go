package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestClockSkewPastTheEpochIsAFlagError checks that a -clock-skew, or a
// swept one, that would put a PoP's clock before the Unix epoch is a bad
// flag (exit 2, one line naming the most, nothing run) and not a failure
// after the run's work (exit 1). It catches a check dropped from
// validateDeployment, or one that misses the sweep's values.
func TestClockSkewPastTheEpochIsAFlagError(t *testing.T) {
	small := []string{"-pops", "3", "-identities", "50", "-requests", "300", "-window", "1s", "-mode", "redis", "-parallel", "1"}
	for _, extra := range [][]string{
		{"-clock-skew", "490897h"},
		{"-clock-skew", "1000000h"},
		{"-sweep", "clock-skew=0,490897h", "-mode", "budget"},
	} {
		args := append(append([]string(nil), small...), extra...)
		code, out, errOut := popSim(t, args...)
		assert.Equal(t, 2, code, "%v: exit status (stderr %q)", extra, errOut)
		assert.Empty(t, out, "%v: printed a report", extra)
		assert.True(t, strings.HasPrefix(errOut, "pop-sim: clock-skew ") && strings.Contains(errOut, "at most 490896h0m0s") &&
			strings.Count(errOut, "\n") == 1, "%v: stderr %q, want one line naming the most", extra, errOut)
	}
}

// TestClockSkewAtTheMostIsAccepted checks that the bound is not tighter
// than the run needs: a skew of exactly engine.MaxSkew parses.
func TestClockSkewAtTheMostIsAccepted(t *testing.T) {
	_, err := parseFlags([]string{"-clock-skew", "490896h", "-window", "1s"})
	assert.NoError(t, err)
}
