package budget

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEpochExpiryCoversItsReaders runs scriptSteps (callers' clocks up to
// 600 ms apart, restarts, retries, Resets, peeks) through the script and
// reads, from the server's MONITOR, every command of an epoch hash
// '<prefix>:b<bucket>:e<e>' (windows 2e and 2e + 1) with the caller's
// clock of the call that ran it. It requires the layout's expiry rule:
//   - a call of window w reads and writes epochs floor((w-2)/2) .. + 2
//     only, so none touches epoch e after window 2e + 3, its last
//     reader's;
//   - every expiry set on it is the end of window 2e + 3 plus the slack
//     on the setting caller's clock: now + TTL = (2e + 4)·W + slack;
//   - every hash a call writes has an expiry by the end of that call, set
//     by it or by an earlier call (with a slack of an hour no key expires
//     during the test and the script deletes none, so a hash once given
//     an expiry keeps it).
//
// Mutations it catches (each tried on lua/budget.lua): the expiry a
// window short ('+ 3' for '+ 4': the second check fails on every one of
// the 1,216 expiries set); the epochs read from floor((w - 3)/2) (the
// first); a hash taken as found when another epoch of its bucket was
// (the third). TestScriptWritesPinned catches any of these as a changed
// digest; this one says which rule broke, and holds when the digests are
// pinned again.
func TestEpochExpiryCoversItsReaders(t *testing.T) {
	rdb, p := redistest.Client(t)
	ctx := context.Background()
	lines := monitorScript(t, p.Addr, rdb, func(name, _ string) bool {
		return name == `"hget"` || name == `"hmget"` || name == `"hset"` || name == `"pexpire"`
	})
	m := stepsMachine(t, 1)
	var nows []int64
	runSteps(t, rdb, m, 20261207, 1, func(step int, sc scriptCall, _ *Result) {
		nows = append(nows, sc.now)
		require.NoError(t, rdb.Echo(ctx, fmt.Sprintf("mark:%d", step)).Err())
	})
	W, slack := m.w, m.cfg.ExpirySlack.Milliseconds()
	epochKey := regexp.MustCompile(`:b\d+:e(-?\d+)$`)
	num := func(s string) int64 {
		v, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, "a number in MONITOR's line: %q", s)
		return v
	}
	expired := map[string]bool{} // epoch hashes an expiry was set on, so far
	var written []string         // the epoch hashes the current step wrote
	step, reads, sets, writes := 0, 0, 0, 0
	for _, l := range lines() {
		if mk, ok := strings.CutPrefix(l, "mark:"); ok {
			for _, k := range written {
				assert.True(t, expired[k], "step %s: %s written, and no expiry set on it", mk, k)
			}
			written, step = written[:0], int(num(mk))+1
			continue
		}
		f := strings.SplitN(l, `" "`, 3) // "NAME" "key" ...: a key has no quote
		require.Len(t, f, 3, "a command with a key and arguments: %s", l)
		key := f[1]
		mk := epochKey.FindStringSubmatch(key)
		if mk == nil {
			continue // the fc hash's or the hot set's
		}
		require.Less(t, step, len(nows), "a command after the last call: %s", l)
		e, now := num(mk[1]), nows[step]
		e0 := floorDiv(now/W-2, 2)
		assert.True(t, e >= e0 && e <= e0+2, "step %d at %d (window %d): %s, outside epochs %d .. %d", step, now, now/W, l, e0, e0+2)
		switch strings.ToLower(strings.TrimPrefix(f[0], `"`)) {
		case "pexpire":
			at := now + num(strings.TrimSuffix(f[2], `"`))
			assert.Equal(t, (2*e+4)*W+slack, at, "step %d: %s expires at the end of window 2e + 3 plus the slack", step, key)
			expired[key] = true
			sets++
		case "hset":
			written = append(written, key)
			writes++
		default:
			reads++
		}
	}
	t.Logf("%d steps: %d reads, %d writes, %d expiries of epoch hashes", len(nows), reads, writes, sets)
	require.Positive(t, reads, "the steps read epoch hashes")
	require.Greater(t, writes, sets, "some writes found their hash, so set no expiry")
	require.Positive(t, sets, "the steps set expiries")
}
