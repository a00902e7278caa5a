package redis

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redisproc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hashTag is Redis Cluster's rule: the text between the first '{' and the
// next '}', when that is not empty; otherwise the whole key.
func hashTag(key string) string {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return key
	}
	end := strings.IndexByte(key[open+1:], '}')
	if end <= 0 {
		return key
	}
	return key[open+1 : open+1+end]
}

// decodeKey inverts EncodeKey for a known prefix and a suffix free of '}':
// esc(id) ends at the key's last '}'.
func decodeKey(prefix, key string) (id, suffix string, ok bool) {
	rest, ok := strings.CutPrefix(key, prefix+":{")
	end := strings.LastIndexByte(rest, '}')
	if !ok || end < 0 || !strings.HasPrefix(rest[end:], "}:") {
		return "", "", false
	}
	id, suffix = rest[:end], rest[end+2:]
	if strings.HasPrefix(id, "\\") {
		return id[1:], suffix, true
	}
	return id, suffix, !strings.HasPrefix(id, "}")
}

// keyLimits are limits of every algorithm, some sharing a window or a Max
// (as two limits of one route do): each must get keys of its own.
func keyLimits() []core.Limit {
	var out []core.Limit
	for _, shape := range []core.Limit{core.PerWindow(10, time.Second), core.PerWindow(1000, time.Hour),
		core.PerWindow(1000, time.Second), core.PerWindow(10, time.Hour), core.PerWindow(101, 1001*time.Millisecond)} {
		out = append(out, everyLimit(shape)...)
	}
	return out
}

// TestSuffixNamesTheLimit: Suffix is the algorithm's byte, Max and the
// window in its largest exact unit, distinct for every limit of keyLimits
// and for every window from 1 ms to 3 days (each spelled once), never
// holding a brace, and "" for an unknown algorithm.
func TestSuffixNamesTheLimit(t *testing.T) {
	assert.Equal(t, "s:10/1s", Suffix(core.PerWindow(10, time.Second)))
	assert.Equal(t, "b:1000/1h", Suffix(core.Limit{Max: 1000, Window: time.Hour, Algorithm: core.TokenBucket}))
	assert.Equal(t, "f:7/1500ms", Suffix(core.Limit{Max: 7, Window: 1500 * time.Millisecond, Algorithm: core.FixedWindow}))
	assert.Equal(t, "l:3/90s", Suffix(core.Limit{Max: 3, Window: 90 * time.Second, Algorithm: core.SlidingLog}))
	assert.Equal(t, "s:1/7d", Suffix(core.PerWindow(1, 7*24*time.Hour)))
	assert.Equal(t, "s:1/1441m", Suffix(core.PerWindow(1, 24*time.Hour+time.Minute)))
	assert.Equal(t, "", Suffix(core.Limit{Max: 1, Window: time.Second, Algorithm: core.Algorithm(9)}))
	seen := map[string]core.Limit{}
	for _, l := range keyLimits() {
		s := Suffix(l)
		prev, dup := seen[s]
		require.False(t, dup, "limits %s and %s share suffix %q", prev, l, s)
		seen[s] = l
		require.False(t, strings.ContainsAny(s, "{}"), "suffix %q holds a brace", s)
	}
}

// hostileID draws ids rich in the bytes that break naive layouts.
func hostileID(rng *rand.Rand) string {
	alphabet := []byte("{}:\\\x00\xff\xfeab ")
	n := 1 + rng.IntN(12)
	if rng.IntN(10) == 0 {
		n = core.MaxKeyLen - rng.IntN(3)
	}
	b := make([]byte, n)
	for i := range b {
		if rng.IntN(4) == 0 {
			b[i] = byte(rng.IntN(256))
		} else {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
	}
	return string(b)
}

// TestKeyEncodingProperties: over random hostile ids (braces, colons, '\\',
// NUL, invalid UTF-8, 512 bytes), distinct (id, limit) pairs give distinct
// keys, every key decodes back to its pair, and all keys of one id share
// one non-empty hash tag that depends on the id alone.
func TestKeyEncodingProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	limits := keyLimits()
	seen := map[string]string{}
	for i := 0; i < 5000; i++ {
		id := hostileID(rng)
		if i < 4 {
			id = []string{"}", "\\", "}}{{", "\\}"}[i]
		}
		var tag string
		for _, l := range limits {
			k := EncodeKey(DefaultPrefix, id, Suffix(l))
			pair := id + "\x00limit " + l.String()
			prev, dup := seen[k]
			if dup {
				require.Equal(t, pair, prev, "key %q shared by %q and %q", k, prev, pair)
			}
			seen[k] = pair
			gotID, suf, ok := decodeKey(DefaultPrefix, k)
			require.True(t, ok, "key %q decodes to (%q, %q, %v), want (%q, %q)", k, gotID, suf, ok, id, Suffix(l))
			require.Equal(t, id, gotID, "key %q decodes to (%q, %q, %v), want (%q, %q)", k, gotID, suf, ok, id, Suffix(l))
			require.Equal(t, Suffix(l), suf, "key %q decodes to (%q, %q, %v), want (%q, %q)", k, gotID, suf, ok, id, Suffix(l))
			h := hashTag(k)
			require.NotEqual(t, k, h, "key %q has no hash tag", k)
			require.NotEqual(t, "", h, "key %q has no hash tag", k)
			if tag != "" {
				require.Equal(t, tag, h, "id %q: tags %q and %q differ across limits", id, tag, h)
			}
			tag = h
		}
	}
}

// TestKeySlotsOnRealRedis asks a cluster-enabled redis-server (CLUSTER
// KEYSLOT) that every key of one identity lands in one slot, for hostile
// ids, and that plain ids spread over many slots.
func TestKeySlotsOnRealRedis(t *testing.T) {
	p, err := redisproc.Start("--cluster-enabled", "yes")
	require.NoError(t, err, "this test needs a real Redis")
	t.Cleanup(func() { p.Stop() })
	c := p.Client()
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 5))
	slot := func(k string) int64 {
		s, err := c.ClusterKeySlot(ctx, k).Result()
		require.NoError(t, err, "CLUSTER KEYSLOT")
		return s
	}
	limits := keyLimits()
	for i := 0; i < 300; i++ {
		id := hostileID(rng)
		want := slot(EncodeKey(DefaultPrefix, id, Suffix(limits[0])))
		for _, l := range limits[1:] {
			s := slot(EncodeKey("other", id, Suffix(l)))
			require.Equal(t, want, s, "id %q: %s key in slot %d, %s in %d", id, l, s, limits[0], want)
		}
	}
	slots := map[int64]bool{}
	for i := 0; i < 200; i++ {
		slots[slot(EncodeKey(DefaultPrefix, "user:"+string(rune('a'+i%26))+string(rune('a'+i/26)), Suffix(limits[0])))] = true
	}
	assert.GreaterOrEqual(t, len(slots), 150, "200 ids in only %d slots", len(slots))
}

// FuzzEncodeKey: for any two ids, each under one of two limits, keys are
// equal only when the ids and limits are, and the hash tag of a valid
// (non-empty) id is never empty.
func FuzzEncodeKey(f *testing.F) {
	f.Add("a", "b", false)
	f.Add("}", "\\}", true)
	f.Add("{x}", "x", false)
	f.Add("a}:s:10/1s", "a", true)
	sa, sb := Suffix(core.PerWindow(10, time.Second)), Suffix(core.PerWindow(1000, time.Hour))
	f.Fuzz(func(t *testing.T, a, b string, other bool) {
		ka, kb := EncodeKey("el", a, sa), EncodeKey("el", b, sa)
		if other {
			kb = EncodeKey("el", b, sb)
		}
		require.Equal(t, a == b && !other, ka == kb, "ids %q, %q (other limit %v): keys %q, %q", a, b, other, ka, kb)
		h := hashTag(ka)
		if a != "" {
			require.NotEqual(t, ka, h, "key %q has no hash tag", ka)
			require.NotEmpty(t, h, "key %q has no hash tag", ka)
		}
	})
}
