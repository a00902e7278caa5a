package redis

import (
	"context"
	"flag"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
)

var identities = flag.Int("identities", 20_000,
	"identities for TestMemoryPerIdentity (the brief's figure: -args -identities=100000)")

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
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("used_memory per identity over %d identities: ours %.1f bytes, article's two keys %.1f bytes (%.0f%%)",
		n, ours, twoKey, 100*ours/twoKey)
	if ours <= 0 || ours >= twoKey {
		t.Errorf("ours %.1f bytes, two-key %.1f: want 0 < ours < two-key", ours, twoKey)
	}
	if k := dbsize(t, c); k != 0 {
		t.Errorf("DBSIZE %d after measuring, want 0", k)
	}
}
