package redistest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// CommandStats is what the server of rdb counted of the commands named
// (as INFO commandstats spells them: "evalsha", "cluster|slots"), summed
// over them: how many calls and their µs, since the server started or its
// last CONFIG RESETSTAT. A command the server never ran counts 0. It fails
// the test when INFO fails or a figure does not parse.
func CommandStats(tb testing.TB, rdb *redis.Client, names ...string) (calls, usec int64) {
	tb.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	require.NoError(tb, err, "INFO commandstats")
	for _, line := range strings.Split(info, "\n") {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		cmd, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd || !contains(names, cmd) {
			continue
		}
		for _, kv := range strings.Split(stats, ",") {
			k, v, _ := strings.Cut(kv, "=")
			if k != "calls" && k != "usec" {
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(tb, err, "%s in %q", k, line)
			if k == "calls" {
				calls += n
			} else {
				usec += n
			}
		}
	}
	return calls, usec
}

func contains(names []string, s string) bool {
	for _, n := range names {
		if n == s {
			return true
		}
	}
	return false
}
