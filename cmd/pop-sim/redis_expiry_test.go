package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPureRedisKeysLiveByTheRunsClock: the memory section says "state
// still live at the mode's end", and the budget keys a Redis on the run's
// clock would have expired are deleted first; pure Redis' are not. Limit
// 10 per 1 s, a 6 s trace: identity a's one request at 0 s (window 0), b's
// at 5.5 s (window 5). backends/redis sets a key's TTL to the end of the
// window after its last admission plus its slack (1 s by default): a's key
// is gone at 3 s, b's lives until 8 s. At the run's end (6 s) one key is
// live.
func TestPureRedisKeysLiveByTheRunsClock(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "two.csv")
	require.NoError(t, os.WriteFile(trace, []byte("# edgelimit-trace v1\n# pops: 2\n# duration_ms: 6000\nt_ms,identity,pop,weight\n0,a,0,1\n5500,b,0,1\n"), 0o644))
	p := redistest.Start(t)
	code, out, errOut := popSim(t, "-redis-addr", p.Addr, "-trace", trace, "-limit", "10", "-window", "1s", "-mode", "redis", "-json")
	require.EqualValues(t, 0, code, "exit %d: %s", code, errOut)
	rd := memOf(decode(t, out).Results[0], "redis")
	require.NotNil(t, rd)
	assert.EqualValues(t, 1, rd["keys"], "pure Redis keys live at the run's end by its clock")
	assert.EqualValues(t, 1, rd["identities"], "pure Redis identities with live state at the run's end by its clock")
}
