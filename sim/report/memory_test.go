package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/sim/engine"
)

// TestMemorySection: one row per mode that measured memory, its figures
// in the columns, "-" where a part was not measured (pure Redis has no
// view; a cluster gives no Redis part), and no section when nothing was.
func TestMemorySection(t *testing.T) {
	red := engine.NewMemory()
	red.Redis = &engine.RedisMemory{UsedBytes: 160 << 20, Keys: 1_000_000, Identities: 1_000_000, BytesPerIdentity: 167.77}
	hy := engine.NewMemory()
	hy.Redis = &engine.RedisMemory{UsedBytes: 640 << 20, Keys: 2_000_000, Identities: 1_000_000, BytesPerIdentity: 671.09, FieldsPerHash: 7.5}
	hy.View = &engine.ViewMemory{HeapBytes: 3 << 30, Entries: 8_000_000, EntriesPerPoP: 1_000_000, BytesPerIdentity: 402.65}
	cl := engine.NewMemory()
	cl.View = hy.View
	rs := []engine.Result{{Mode: "redis", Memory: red}, {Mode: "local"}, {Mode: "hybrid", Memory: hy}, {Mode: "hybrid-nogossip", Memory: cl}}
	var b bytes.Buffer
	if err := writeMemory(&b, rs); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	want := [][]string{
		{"redis", "160.0", "1000000", "1000000", "-", "167.8", "-", "-", "-"},
		{"hybrid", "640.0", "2000000", "1000000", "7.50", "671.1", "3072.0", "1000000", "402.6"},
		{"hybrid-nogossip", "-", "-", "-", "-", "-", "3072.0", "1000000", "402.6"},
	}
	if len(lines) != 2+len(want) || !strings.Contains(lines[0], "article: 96 B for its two keys; Cloudflare: 24 B") {
		t.Fatalf("want a title with the references, a header and 3 rows:\n%s", got)
	}
	for k, w := range want {
		if f := strings.Fields(lines[2+k]); strings.Join(f, " ") != strings.Join(w, " ") {
			t.Errorf("row %d: %v, want %v", k, f, w)
		}
	}
	b.Reset()
	if err := writeMemory(&b, rs[1:2]); err != nil || b.Len() != 0 {
		t.Fatalf("a run without memory printed %q (%v)", b.String(), err)
	}
}
