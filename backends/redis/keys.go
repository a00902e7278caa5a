package redis

import (
	"strconv"
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
// sliding window, "f" fixed window, "l" sliding log, "b" token bucket), ':',
// l.Max in decimal, '/' and the window (see windowText) — "s:10/1s" for 10
// per second counted by the sliding window counter, "s:1000/1h" for 1000 per
// hour, "f:7/1500ms" — or "" for an unknown algorithm. Limits differing in
// algorithm, Max or window thus never share a key under one prefix, while
// every limiter of one limit (every process enforcing it) shares its keys.
// The suffix holds no brace, so it never moves a key's hash tag.
func Suffix(l core.Limit) string {
	if int(l.Algorithm) >= len(algSuffixes) {
		return ""
	}
	b := make([]byte, 0, 24)
	b = append(b, algSuffixes[l.Algorithm]...)
	b = append(b, ':')
	b = strconv.AppendInt(b, l.Max, 10)
	b = append(b, '/')
	return string(appendWindow(b, l.WindowMillis()))
}

// windowUnits are the units a window is written in, largest first.
var windowUnits = [...]struct {
	ms   int64
	name string
}{{86_400_000, "d"}, {3_600_000, "h"}, {60_000, "m"}, {1000, "s"}}

// appendWindow appends window w (ms, positive) in the largest of d, h, m
// and s that divides it, else in ms: "1s", "90s", "1h", "7d", "1500ms".
// Each window has one spelling, and distinct windows distinct ones.
func appendWindow(b []byte, w int64) []byte {
	for _, u := range windowUnits {
		if w%u.ms == 0 {
			return append(strconv.AppendInt(b, w/u.ms, 10), u.name...)
		}
	}
	return append(strconv.AppendInt(b, w, 10), "ms"...)
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
