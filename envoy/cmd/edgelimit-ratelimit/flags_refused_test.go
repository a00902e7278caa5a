package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFlagsOutOfRangeRefused: a flag value the command would otherwise
// ignore or read as something else is refused with a line naming the flag
// (exit 2): a -redis-timeout of 0 or below (the startup check then ran
// with no time at all and reported Redis away, skipping the Cluster check,
// while serving used 100 ms), an unknown -log-level or -log-format (read
// as info and text), and negative -reload-interval, -shutdown-timeout,
// -redis-pipeline-batch or -local-capacity (read as never, at once, off
// and the default). It catches each of them accepted.
func TestFlagsOutOfRangeRefused(t *testing.T) {
	good := writeConfig(t, "domain: d\n")
	for _, c := range []struct{ flag, value, want string }{
		{"-redis-timeout", "0s", "-redis-timeout 0s: want a positive duration"},
		{"-redis-timeout", "-1s", "-redis-timeout -1s: want a positive duration"},
		{"-log-level", "verbose", `-log-level "verbose": want debug, info, warn or error`},
		{"-log-format", "yaml", `-log-format "yaml": want text or json`},
		{"-reload-interval", "-1s", "-reload-interval -1s: want 0 (never) or a positive interval"},
		{"-shutdown-timeout", "-1s", "-shutdown-timeout -1s: want 0 (at once) or a positive duration"},
		{"-redis-pipeline-batch", "-1", "-redis-pipeline-batch -1: want 0 (off) or more"},
		{"-local-capacity", "-5", "-local-capacity -5: want 0 (the default) or more"},
		{"-redis-pipeline-window", "-1s", "-redis-pipeline-window -1s: want 0 or a positive duration"},
		{"-redis-db", "-1", "-redis-db -1: want 0 or more"},
	} {
		var stderr bytes.Buffer
		_, err := parse([]string{"-config", good, c.flag, c.value}, noEnv, &stderr)
		if assert.Error(t, err, "%s %s", c.flag, c.value) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
}
