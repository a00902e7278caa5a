package lua

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
)

func TestNamesAndSource(t *testing.T) {
	names := Names()
	for _, want := range []string{"bucket", "fixed", "log", "sliding"} {
		if !slices.Contains(names, want) {
			t.Errorf("Names() = %v, missing %q", names, want)
		}
		src, err := Source(want)
		if err != nil || !strings.Contains(src, "redis.call") {
			t.Errorf("Source(%q): %d bytes, %v", want, len(src), err)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("Names() not sorted: %v", names)
	}
	if _, err := Source("nope"); err == nil {
		t.Error("Source(\"nope\") gave no error")
	}
}

// TestHybridScriptsLoad: the hybrid's scripts (exercised by sync/reconcile's
// tests) are embedded and load into a real Redis.
func TestHybridScriptsLoad(t *testing.T) {
	c, _ := redistest.Client(t)
	for _, name := range []string{"hybrid_decide", "hybrid_reconcile"} {
		src, err := Source(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.ScriptLoad(context.Background(), src).Err(); err != nil {
			t.Fatalf("%s.lua does not load: %v", name, err)
		}
	}
}

// TestScriptsLoadAndAnswer loads every script into a real Redis and runs it
// once as a peek and once as a commit: four integers back, and a peek
// creates no key.
func TestScriptsLoadAndAnswer(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for _, name := range []string{"bucket", "fixed", "log", "sliding"} {
		src, _ := Source(name)
		if err := c.ScriptLoad(ctx, src).Err(); err != nil {
			t.Fatalf("%s.lua does not load: %v", name, err)
		}
		key := "{t}:" + name
		for _, commit := range []int{0, 1} {
			v, err := c.Eval(ctx, src, []string{key}, 1_700_000_000_000, 60_000, 10, 1, commit, 0, 0).Int64Slice()
			if err != nil || len(v) != 4 || v[0] != 1 {
				t.Fatalf("%s.lua commit=%d: %v %v", name, commit, v, err)
			}
			if n, _ := c.Exists(ctx, key).Result(); n != int64(commit) {
				t.Errorf("%s.lua commit=%d: key exists=%d", name, commit, n)
			}
		}
	}
}
