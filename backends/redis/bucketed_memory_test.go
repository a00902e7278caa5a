package redis

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBucketedMemoryPerIdentity measures used_memory grown per identity
// over -identities identities (default 20,000; 5,000 with -short) for one
// key per identity and for the bucketed layout sized as the package doc
// says (identities / 80 buckets), on one server, and prints both: the
// bucketed layout must cost at most half (it measured a quarter), and the
// server must be left empty. bench/cmd/layoutbench gives the figures with
// decisions per second beside them.
func TestBucketedMemoryPerIdentity(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	require.NoError(t, c.ConfigSet(ctx, "hash-max-listpack-entries", "128").Err(), "the lower setting some deployments choose (the default is 512)")
	n := *identities
	if testing.Short() {
		n = min(n, 5_000)
	}
	buckets := max(1, n/80)
	perID, _, err := MeasureMemoryPerIdentity(ctx, c, n)
	require.NoError(t, err)
	bucketed, err := MeasureBucketedMemoryPerIdentity(ctx, c, n, buckets)
	require.NoError(t, err)
	t.Logf("used_memory per identity over %d identities: one key each %.1f B, bucketed (%d buckets) %.1f B (ratio %.3f)",
		n, perID, buckets, bucketed, bucketed/perID)
	assert.Positive(t, bucketed, "bucketed growth")
	assert.LessOrEqual(t, bucketed, perID/2, "bucketed %.1f B against one key each %.1f B: want at most half", bucketed, perID)
	assert.Zero(t, dbsize(t, c), "DBSIZE after measuring")
}
