package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBarLineShowsRateAndTimeLeft: a quarter done in 10 s is 25%, the
// rate so far, and 30 s left at that rate.
func TestBarLineShowsRateAndTimeLeft(t *testing.T) {
	got := barLine("budget", 250_000, 1_000_000, 10*time.Second)
	for _, want := range []string{"budget", " 25%", "25000 decisions/s", "30s left"} {
		require.True(t, strings.Contains(got, want), "progress line %q lacks %q", got, want)
	}
	got = barLine("redis", 0, 10, 0)
	require.False(t, strings.Contains(got, "left"), "nothing done yet, yet a time left: %q", got)
}
