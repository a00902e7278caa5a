package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	hy.View = &engine.ViewMemory{HeapBytes: 3 << 30, Entries: 8_000_000, EntriesPerPoP: 1_000_000, BytesPerEntry: 402.65,
		Identities: 1_000_000, BytesPerIdentity: 3221.23}
	cl := engine.NewMemory()
	cl.View = hy.View
	rs := []engine.Result{{Mode: "redis", Memory: red}, {Mode: "local"}, {Mode: "budget", Memory: hy}, {Mode: "budget-gossip", Memory: cl}}
	var b bytes.Buffer
	require.NoError(t, writeMemory(&b, rs))
	got := b.String()
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	want := [][]string{
		{"redis", "160.0", "1000000", "1000000", "-", "167.8", "-", "-", "-", "-"},
		{"budget", "640.0", "2000000", "1000000", "7.50", "671.1", "3072.0", "1000000", "402.6", "3221.2"},
		{"budget-gossip", "-", "-", "-", "-", "-", "3072.0", "1000000", "402.6", "3221.2"},
	}
	require.Len(t, lines, 2+len(want), "want a title with the references, a header and 3 rows:\n%s", got)
	require.Contains(t, lines[0], "article: 96 B for its two keys; Cloudflare: 24 B", "the title names the references")
	assert.Equal(t, []string{"mode", "redis", "MB", "keys", "identities", "fields/hash", "redis", "B/id", "view", "MB", "view", "ids/PoP", "view", "B/entry", "view", "B/id"},
		strings.Fields(lines[1]), "header: a view's bytes per entry, then per identity")
	for k, w := range want {
		assert.Equal(t, w, strings.Fields(lines[2+k]), "row %d", k)
	}
	b.Reset()
	require.NoError(t, writeMemory(&b, rs[1:2]))
	assert.Zero(t, b.Len(), "a run without memory printed %q", b.String())
}

// TestWorstSection: each listed identity gets a title line (mode, identity,
// class, peak and its multiple of the limit, the span's end) and its
// seconds as aligned rows; results without Worst print nothing.
func TestWorstSection(t *testing.T) {
	rs := []engine.Result{{Mode: "redis"}, {Mode: "budget", Worst: []engine.WorstIdentity{{ID: 7, Class: "near", Peak: 137, PeakEndMs: 35_040,
		Seconds: []engine.WorstSecond{{Second: 24, Units: 9, Admitted: 0, Reference: 9, PoPs: 1}, {Second: 25, Units: 19, Admitted: 17, Reference: 19, Waited: 3, PoPs: 2}}}}}}
	var b bytes.Buffer
	require.NoError(t, writeWorst(&b, rs, 100))
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	require.Len(t, lines, 4, "a title, a header and two seconds:\n%s", b.String())
	assert.Equal(t, "budget: identity 7 (near) admitted 137 units (1.37× the limit) in the window ending 35.040 s", lines[0])
	assert.Equal(t, []string{"second", "units", "admitted", "reference", "waited", "PoPs"}, strings.Fields(lines[1]))
	assert.Equal(t, []string{"24", "9", "0", "9", "0", "1"}, strings.Fields(lines[2]))
	assert.Equal(t, []string{"25", "19", "17", "19", "3", "2"}, strings.Fields(lines[3]))
	assert.Equal(t, len(lines[1]), len(lines[2]), "rows aligned with the header")
	b.Reset()
	require.NoError(t, writeWorst(&b, rs[:1], 100))
	assert.Zero(t, b.Len(), "no Worst, no section: %q", b.String())
}
