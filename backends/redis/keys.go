package redis

import (
	"strings"

	"github.com/edgelimit/edgelimit/core"
)

// DefaultPrefix is the key namespace used unless WithPrefix says otherwise.
const DefaultPrefix = "el"

var algSuffixes = [...]string{
	core.SlidingWindow: "s",
	core.FixedWindow:   "f",
	core.SlidingLog:    "l",
	core.TokenBucket:   "b",
}

// Suffix returns the key suffix of limit l: its algorithm's byte ("s"
// sliding window, "f" fixed window, "l" sliding log, "b" token bucket), ':'
// and l.KeyText() (Max, '/', the window in its largest exact unit) —
// "s:10/1s" for 10 per second counted by the sliding window counter,
// "s:1000/1h" for 1000 per hour, "f:7/1500ms" — or "" for an unknown
// algorithm. Limits differing in algorithm, Max or window thus never share
// a key under one prefix, while every limiter of one limit (every process
// enforcing it) shares its keys. The suffix holds no brace, so it never
// moves a key's hash tag.
func Suffix(l core.Limit) string {
	if int(l.Algorithm) >= len(algSuffixes) {
		return ""
	}
	return algSuffixes[l.Algorithm] + ":" + l.KeyText()
}

// EncodeKey returns prefix + ":{" + esc(id) + "}:" + suffix, where esc(id)
// is id with a '\' in front when id starts with '}' or '\'. With a prefix
// free of braces and a suffix free of '}' (as Suffix's) it is injective in
// (id, suffix) — the last '}' ends esc(id) — and keeps all of an
// identity's keys in one Redis Cluster slot (see the package doc). Other
// code that stores per-identity state beside ours (another suffix) should
// build its keys with it.
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
