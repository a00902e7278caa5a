package redis

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

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

// decodeKey inverts EncodeKey for a known prefix and one-byte suffix.
func decodeKey(prefix, key string) (id, suffix string, ok bool) {
	rest, ok := strings.CutPrefix(key, prefix+":{")
	if !ok || len(rest) < 3 || rest[len(rest)-3:len(rest)-1] != "}:" {
		return "", "", false
	}
	id, suffix = rest[:len(rest)-3], rest[len(rest)-1:]
	if strings.HasPrefix(id, "\\") {
		return id[1:], suffix, true
	}
	return id, suffix, !strings.HasPrefix(id, "}")
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

// TestKeyEncodingProperties: over random hostile ids (braces, colons, '\',
// NUL, invalid UTF-8, 512 bytes), distinct (id, algorithm) pairs give
// distinct keys, every key decodes back to its pair, and all keys of one id
// share one non-empty hash tag that depends on the id alone.
func TestKeyEncodingProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	seen := map[string]string{}
	for i := 0; i < 20000; i++ {
		id := hostileID(rng)
		if i < 4 {
			id = []string{"}", "\\", "}}{{", "\\}"}[i]
		}
		var tag string
		for _, a := range core.Algorithms {
			k := EncodeKey(DefaultPrefix, id, Suffix(a))
			pair := id + "\x00alg" + a.String()
			prev, dup := seen[k]
			if dup {
				require.Equal(t, pair, prev, "key %q shared by %q and %q", k, prev, pair)
			}
			seen[k] = pair
			gotID, suf, ok := decodeKey(DefaultPrefix, k)
			require.True(t, ok, "key %q decodes to (%q, %q, %v), want (%q, %q)", k, gotID, suf, ok, id, Suffix(a))
			require.Equal(t, id, gotID, "key %q decodes to (%q, %q, %v), want (%q, %q)", k, gotID, suf, ok, id, Suffix(a))
			require.Equal(t, Suffix(a), suf, "key %q decodes to (%q, %q, %v), want (%q, %q)", k, gotID, suf, ok, id, Suffix(a))
			h := hashTag(k)
			require.NotEqual(t, k, h, "key %q has no hash tag", k)
			require.NotEqual(t, "", h, "key %q has no hash tag", k)
			if tag != "" {
				require.Equal(t, tag, h, "id %q: tags %q and %q differ across algorithms", id, tag, h)
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
	for i := 0; i < 300; i++ {
		id := hostileID(rng)
		want := slot(EncodeKey(DefaultPrefix, id, Suffix(core.SlidingWindow)))
		for _, a := range core.Algorithms[1:] {
			s := slot(EncodeKey("other", id, Suffix(a)))
			require.Equal(t, want, s, "id %q: %s key in slot %d, sliding in %d", id, a, s, want)
		}
	}
	slots := map[int64]bool{}
	for i := 0; i < 200; i++ {
		slots[slot(EncodeKey(DefaultPrefix, "user:"+string(rune('a'+i%26))+string(rune('a'+i/26)), "s"))] = true
	}
	assert.GreaterOrEqual(t, len(slots), 150, "200 ids in only %d slots", len(slots))
}

// FuzzEncodeKey: for any two ids, keys are equal only when the ids are, and
// the hash tag of a valid (non-empty) id is never empty.
func FuzzEncodeKey(f *testing.F) {
	f.Add("a", "b")
	f.Add("}", "\\}")
	f.Add("{x}", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		ka, kb := EncodeKey("el", a, "s"), EncodeKey("el", b, "s")
		require.Equal(t, a == b, ka == kb, "ids %q, %q: keys %q, %q", a, b, ka, kb)
		h := hashTag(ka)
		if a != "" {
			require.NotEqual(t, ka, h, "key %q has no hash tag", ka)
			require.NotEmpty(t, h, "key %q has no hash tag", ka)
		}
	})
}
