package redis

import (
	"strings"

	"github.com/edgelimit/edgelimit/core"
)

// DefaultPrefix is the key namespace used unless WithPrefix says otherwise.
const DefaultPrefix = "el"

var suffixes = [...]string{
	core.SlidingWindow: "s",
	core.FixedWindow:   "f",
	core.SlidingLog:    "l",
	core.TokenBucket:   "b",
}

// Suffix returns the one-byte key suffix of algorithm a ("s", "f", "l" or
// "b"), or "" for an unknown algorithm.
func Suffix(a core.Algorithm) string {
	if int(a) < len(suffixes) {
		return suffixes[a]
	}
	return ""
}

// EncodeKey returns prefix + ":{" + esc(id) + "}:" + suffix, where esc(id)
// is id with a '\' in front when id starts with '}' or '\'. With a prefix
// free of braces and a fixed-length suffix it is injective in id and keeps
// all of an identity's keys in one Redis Cluster slot (see the package doc).
// Other code that stores per-identity state beside ours (another suffix)
// should build its keys with it.
func EncodeKey(prefix, id, suffix string) string {
	var b strings.Builder
	b.Grow(len(prefix) + len(id) + len(suffix) + 5)
	b.WriteString(prefix)
	b.WriteString(":{")
	if id != "" && (id[0] == '}' || id[0] == '\\') {
		b.WriteByte('\\')
	}
	b.WriteString(id)
	b.WriteString("}:")
	b.WriteString(suffix)
	return b.String()
}

// validPrefix reports whether p can prefix keys: no braces, which would move
// the hash tag.
func validPrefix(p string) bool {
	return !strings.ContainsAny(p, "{}")
}
