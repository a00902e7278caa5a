package redis

import (
	"context"
	"flag"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var identities = flag.Int("identities", 20_000,
	"identities for TestMemoryPerIdentity (the article-scale figure: -args -identities=100000)")

// TestMemoryPerIdentity measures used_memory grown per identity over
// -identities identities (default 20,000; 5,000 with -short): our one-key
// layout must cost less than the article's two keys, and the server must be
// left empty.
func TestMemoryPerIdentity(t *testing.T) {
	c, _ := redistest.Client(t)
	n := *identities
	if testing.Short() {
		n = min(n, 5_000)
	}
	ours, twoKey, err := MeasureMemoryPerIdentity(context.Background(), c, n)
	require.NoError(t, err)
	t.Logf("used_memory per identity over %d identities: ours %.1f bytes, article's two keys %.1f bytes (%.0f%%)",
		n, ours, twoKey, 100*ours/twoKey)
	if assert.Greater(t, ours, float64(0), "ours %.1f bytes, two-key %.1f: want 0 < ours < two-key", ours, twoKey) {
		assert.Less(t, ours, twoKey, "ours %.1f bytes, two-key %.1f: want 0 < ours < two-key", ours, twoKey)
	}
	k := dbsize(t, c)
	assert.Equal(t, int64(0), k, "DBSIZE %d after measuring, want 0", k)
}
