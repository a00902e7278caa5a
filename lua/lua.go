// Package lua holds edgelimit's Redis scripts, one .lua file per algorithm,
// embedded in the binary: sliding.lua (the sliding window counter), fixed.lua
// (the fixed window), log.lua (the exact sliding log) and bucket.lua (the
// token bucket as GCRA). Each repeats exactly the arithmetic of package core,
// so a decision made at Redis equals the one core's Go math makes.
//
// Every script is called the same way, one call per decision:
//
//	KEYS[1]  the identity's key (see backends/redis for the layout)
//	ARGV[1]  now, ms since the Unix epoch (ignored when ARGV[6] is 1)
//	ARGV[2]  window, ms
//	ARGV[3]  max, units per window
//	ARGV[4]  n, the weight of the request
//	ARGV[5]  commit: 1 counts the units when they fit, 0 is a peek that
//	         writes nothing, not even a new key
//	ARGV[6]  1 to read now from the server (redis.call('TIME')), else 0
//	ARGV[7]  slack, ms added to every key's expiry
//
// and returns {allowed (1/0), remaining, retry_after_ms, reset_after_ms}.
//
// sliding_bucket.lua and fixed_bucket.lua decide the same algorithms on
// backends/redis' bucketed layout (KEYS[1] the bucket's marker; the seven
// ARGV above, then the identity and the clock-back horizon), and
// reset_bucket.lua forgets an identity there (see backends/redis).
//
// budget.lua is the budget limiter's (package sync/budget), with its own
// calling convention documented there: one call per batch of reports and
// grants of one hash tag, or per decision.
//
// The package has no logic beyond listing and reading the files: a new
// script is added by dropping a .lua file here.
package lua

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// FS holds every script of the package, by file name ("sliding.lua", ...).
//
//go:embed *.lua
var FS embed.FS

const ext = ".lua"

// Names lists the scripts by name (file name without ".lua"), sorted.
func Names() []string {
	entries, _ := fs.ReadDir(FS, ".")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ext); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Source returns the text of the script called name ("sliding", "fixed",
// "log", "bucket", ...), or an error when there is no such script.
func Source(name string) (string, error) {
	b, err := FS.ReadFile(name + ext)
	if err != nil {
		return "", fmt.Errorf("lua: no script %q: %w", name, err)
	}
	return string(b), nil
}
