package reconcile

import (
	"context"
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
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

// decodeKey inverts Key for a known namespace.
func decodeKey(ns, key string) (id string, idx int64, ok bool) {
	rest, ok := strings.CutPrefix(key, ns+":{")
	if !ok || len(rest) < 2 {
		return "", 0, false
	}
	kind, rest := rest[:2], rest[2:]
	end := strings.LastIndex(rest, "}:")
	if end < 0 {
		return "", 0, false
	}
	body, num := rest[:end], rest[end+2:]
	idx, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return "", 0, false
	}
	switch kind {
	case "k:":
		return body, idx, !strings.Contains(body, "}")
	case "x:":
		b, err := hex.DecodeString(body)
		return string(b), idx, err == nil && strings.Contains(string(b), "}")
	}
	return "", 0, false
}

// hostileID draws ids rich in the bytes that break naive layouts: braces,
// colons, '\', NUL, invalid UTF-8, sometimes MaxKeyLen long.
func hostileID(rng *rand.Rand) string {
	alphabet := []byte("{}:\\\x00\xff\xfe0123456789x ")
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

// TestKeyLayoutProperties: over random hostile identities and window
// indexes (negative too), distinct (identity, index) pairs never share a
// Redis key, every key decodes back to its pair, and all keys of one
// identity share one non-empty hash tag (one Cluster slot) that depends on
// the identity alone.
func TestKeyLayoutProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	seen := map[string]string{}
	tags := map[string]string{}
	fixed := []string{"}", "{", "}{", "k:}", "x:7d", "7d", "a}:5", "a", ":", "\x00", "\xff"}
	for i := 0; i < 20000; i++ {
		id := hostileID(rng)
		if i < len(fixed) {
			id = fixed[i]
		}
		for _, idx := range []int64{rng.Int64N(1 << 40), -rng.Int64N(100), 0, 5} {
			k := Key("el", id, idx)
			pair := id + "\x00@" + strconv.FormatInt(idx, 10)
			prev, dup := seen[k]
			if dup {
				require.Equal(t, pair, prev, "key %q shared by %q and %q", k, prev, pair)
			}
			seen[k] = pair
			gid, gidx, ok := decodeKey("el", k)
			require.True(t, ok, "key %q decodes to (%q, %d, %v), want (%q, %d)", k, gid, gidx, ok, id, idx)
			require.Equal(t, id, gid, "key %q decodes to (%q, %d, %v), want (%q, %d)", k, gid, gidx, ok, id, idx)
			require.Equal(t, idx, gidx, "key %q decodes to (%q, %d, %v), want (%q, %d)", k, gid, gidx, ok, id, idx)
			h := hashTag(k)
			require.NotEqual(t, k, h, "key %q has no hash tag", k)
			require.NotEqual(t, "", h, "key %q has no hash tag", k)
			prev, ok = tags[id]
			if ok {
				require.Equal(t, prev, h, "id %q: hash tags %q and %q differ across windows", id, prev, h)
			}
			// Two identities may share a slot, never a tag: the tag
			// is the encoded identity.
			owner, ok := tags["tag\x00"+h]
			if ok {
				require.Equal(t, id, owner, "ids %q and %q share hash tag %q", owner, id, h)
			}
			tags[id], tags["tag\x00"+h] = h, id
		}
	}
}

// FuzzKey: keys of two (identity, index) pairs are equal only when the
// pairs are, and every key has a non-empty hash tag.
func FuzzKey(f *testing.F) {
	f.Add("a", "b", int64(1), int64(1))
	f.Add("}", "x:7d", int64(0), int64(0))
	f.Add("a}:5", "a", int64(3), int64(53))
	f.Fuzz(func(t *testing.T, a, b string, i, j int64) {
		ka, kb := Key("el", a, i), Key("el", b, j)
		require.Equal(t, a == b && i == j, ka == kb, "(%q,%d), (%q,%d): keys %q, %q", a, i, b, j, ka, kb)
		h := hashTag(ka)
		if a != "" {
			require.NotEqual(t, ka, h, "key %q has no hash tag", ka)
			require.NotEmpty(t, h, "key %q has no hash tag", ka)
		}
	})
}

// TestDecideTransientPeers: with Transient the caller's peers weigh in the
// decision but are not written; without it they are max-merged.
func TestDecideTransientPeers(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	a := New(rdb, "el", "A", time.Second)
	args := DecideArgs{Item: Item{Key: "k", Index: 1}, N: 1, Max: 5, WindowMillis: 1000,
		Peers: []Peer{{ID: "B", Counts: [2]int64{4, 0}}}, Transient: true}
	ok, r, err := a.Decide(ctx, args)
	require.NoError(t, err, "4 of 5 known: ok=%v err=%v, want admitted", ok, err)
	require.True(t, ok, "4 of 5 known: ok=%v err=%v, want admitted", ok, err)
	require.Equal(t, int64(1), r.Total(0), "reply total %d, want only A's 1 stored", r.Total(0))
	ok, _, _ = a.Decide(ctx, args)
	require.False(t, ok, "admitted a 6th unit: the transient peer was not weighed")
	v, _ := rdb.HGetAll(ctx, Key("el", "k", 1)).Result()
	require.Len(t, v, 1, "Redis holds %v, want only A=1", v)
	require.Equal(t, "1", v["A"], "Redis holds %v, want only A=1", v)
	// A peer count below what Redis holds adds nothing.
	b := New(rdb, "el", "B", time.Second)
	b.Flush(ctx, []Item{{Key: "k", Index: 1, Own: [2]int64{2, 0}}})
	args.Peers[0].Counts[0] = 1
	ok, r, _ = a.Decide(ctx, args)
	require.True(t, ok, "ok=%v total %d, want admitted with A=2 B=2", ok, r.Total(0))
	require.Equal(t, int64(4), r.Total(0), "ok=%v total %d, want admitted with A=2 B=2", ok, r.Total(0))
	args.Transient = false
	args.Peers[0].Counts[0] = 9
	ok, r, _ = a.Decide(ctx, args)
	require.False(t, ok, "persisted peers: ok=%v total %d, want denied with A=2 B=9", ok, r.Total(0))
	require.Equal(t, int64(11), r.Total(0), "persisted peers: ok=%v total %d, want denied with A=2 B=9", ok, r.Total(0))
}
