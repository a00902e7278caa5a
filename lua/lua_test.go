package lua

import (
	"context"
	"slices"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNamesAndSource(t *testing.T) {
	names := Names()
	for _, want := range []string{"bucket", "fixed", "log", "sliding"} {
		assert.True(t, slices.Contains(names, want), "Names() = %v, missing %q", names, want)
		src, err := Source(want)
		if assert.NoError(t, err, "Source(%q): %d bytes", want, len(src)) {
			assert.Contains(t, src, "redis.call", "Source(%q): %d bytes, %v", want, len(src), err)
		}
	}
	assert.True(t, slices.IsSorted(names), "Names() not sorted: %v", names)
	_, err := Source("nope")
	assert.Error(t, err, "Source(\"nope\") gave no error")
}

// TestBudgetScriptLoads: the budget limiter's script (exercised by
// sync/budget's tests) is embedded and loads into a real Redis.
func TestBudgetScriptLoads(t *testing.T) {
	c, _ := redistest.Client(t)
	src, err := Source("budget")
	require.NoError(t, err)
	err = c.ScriptLoad(context.Background(), src).Err()
	require.NoError(t, err, "budget.lua does not load")
}

// TestScriptsLoadAndAnswer loads every script into a real Redis and runs it
// once as a peek and once as a commit: four integers back, and a peek
// creates no key.
func TestScriptsLoadAndAnswer(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for _, name := range []string{"bucket", "fixed", "log", "sliding"} {
		src, _ := Source(name)
		err := c.ScriptLoad(ctx, src).Err()
		require.NoError(t, err, "%s.lua does not load", name)
		key := "{t}:" + name
		for _, commit := range []int{0, 1} {
			v, err := c.Eval(ctx, src, []string{key}, 1_700_000_000_000, 60_000, 10, 1, commit, 0, 0).Int64Slice()
			require.NoError(t, err, "%s.lua commit=%d: %v", name, commit, v)
			require.Len(t, v, 4, "%s.lua commit=%d: %v %v", name, commit, v, err)
			require.Equal(t, int64(1), v[0], "%s.lua commit=%d: %v %v", name, commit, v, err)
			n, _ := c.Exists(ctx, key).Result()
			assert.Equal(t, int64(commit), n, "%s.lua commit=%d: key exists=%d", name, commit, n)
		}
	}
}
