package traffic

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// TraceVersion is the version of the trace file format this package writes
// and the only one it reads (docs/trace-format.md).
const TraceVersion = "v1"

// csvHeader is the first line of a CSV trace.
const csvHeader = "# edgelimit-trace " + TraceVersion

// Format is a trace file's encoding.
type Format int

const (
	CSV   Format = iota // comma-separated, one request a line, after a header
	JSONL               // JSON Lines: a header object, then one request object a line
)

func (f Format) String() string {
	if f == JSONL {
		return "jsonl"
	}
	return "csv"
}

// FormatOf picks the format by a path's extension: .csv, or .jsonl/.ndjson.
func FormatOf(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return CSV, nil
	case ".jsonl", ".ndjson":
		return JSONL, nil
	}
	return 0, fmt.Errorf("trace %s: unknown format, want a .csv, .jsonl or .ndjson file", path)
}

// appendMs appends d in milliseconds, with up to six decimals (d's
// nanoseconds exactly) and no trailing zeros.
func appendMs(b []byte, d time.Duration) []byte {
	b = strconv.AppendInt(b, int64(d/time.Millisecond), 10)
	frac := int64(d % time.Millisecond)
	if frac == 0 {
		return b
	}
	digits := strconv.AppendInt(nil, frac+1e6, 10)[1:] // six digits, zero-padded
	return append(append(b, '.'), strings.TrimRight(string(digits), "0")...)
}

// maxMs is the largest whole number of milliseconds a time may have.
const maxMs = int64(1<<62) / int64(time.Millisecond)

// parseMs reads a non-negative decimal number of milliseconds exactly:
// digits, optionally a point and more digits; decimals past the sixth
// (below a nanosecond) are dropped.
func parseMs(s []byte) (time.Duration, error) {
	whole, frac, dot := cutByte(s, '.')
	if len(whole) == 0 || (dot && len(frac) == 0) {
		return 0, errNotMs
	}
	ms, ok := parseUint(whole)
	if !ok || ms > maxMs {
		return 0, errNotMs
	}
	var ns int64
	for i, c := range frac {
		if c < '0' || c > '9' {
			return 0, errNotMs
		}
		if i < 6 {
			ns = ns*10 + int64(c-'0')
		}
	}
	for i := len(frac); i < 6; i++ {
		ns *= 10
	}
	return time.Duration(ms)*time.Millisecond + time.Duration(ns), nil
}

// errNotMs is parseMs' one error; callers say which field it was.
var errNotMs = fmt.Errorf("not a number of milliseconds")

// parseUint reads plain decimal digits that fit an int64 below 1<<62.
func parseUint(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func cutByte(s []byte, sep byte) (before, after []byte, found bool) {
	for i, c := range s {
		if c == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, nil, false
}
