package budget

import (
	"bufio"
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// monitorWrites follows a server's MONITOR and returns a function that,
// after the test's calls, returns every command run inside a script that
// is not a read, in order, without the timestamps.
func monitorWrites(t *testing.T, addr string, rdb *redis.Client) func() []string {
	t.Helper()
	reads := map[string]bool{`"get"`: true, `"hget"`: true, `"hmget"`: true, `"zscore"`: true, `"pttl"`: true, `"zrangebyscore"`: true, `"time"`: true}
	return monitorScript(t, addr, rdb, func(name, rest string) bool {
		if reads[name] {
			return false
		}
		// the fc hash's PEXPIRE follows a PTTL, which reads the
		// server's own clock: two servers may differ by a ms there
		return !(name == `"pexpire"` && strings.Contains(rest, `:fc" `))
	})
}

// monitorScript follows a server's MONITOR and returns a function that,
// after the test's calls, returns in order every command run inside a
// script that keep accepts (given its name, lower case and quoted, and
// the whole command) without the timestamps, and, as "mark:X", each
// ECHO "mark:X" the test sent between its calls.
func monitorScript(t *testing.T, addr string, rdb *redis.Client, keep func(name, rest string) bool) func() []string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_, err = conn.Write([]byte("MONITOR\r\n"))
	require.NoError(t, err)
	rd := bufio.NewReaderSize(conn, 1<<20)
	line, err := rd.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "+OK\r\n", line)
	return func() []string {
		require.NoError(t, rdb.Echo(context.Background(), "end-of-calls").Err())
		var out []string
		for {
			line, err := rd.ReadString('\n')
			require.NoError(t, err)
			if strings.Contains(line, `"end-of-calls"`) {
				return out
			}
			if _, m, ok := strings.Cut(line, `"echo" "mark:`); ok {
				out = append(out, "mark:"+strings.TrimSuffix(strings.TrimSpace(m), `"`))
				continue
			}
			_, rest, ok := strings.Cut(line, " [0 lua] ")
			if !ok {
				continue
			}
			rest = strings.TrimSpace(rest)
			name, _, _ := strings.Cut(rest, " ")
			if keep(strings.ToLower(name), rest) {
				out = append(out, rest)
			}
		}
	}
}

// scriptCall is one step of scriptSteps: a Call of Machine m's
// configuration at now.
type scriptCall struct {
	c   *Call
	now int64
}

// scriptSteps returns 3,000 calls built from seed to reach every branch
// of the script, as TestScriptMatchesReference's, and more: decisions
// that carry reports in their own sequence (late and repeated ones),
// peeks, Resets, batches naming an identity twice with hot cursors of w
// and w-1, calls whose checks are recorded, announcements, restarts and
// PoPs of different P and free credit. Each call sets m's incarnation,
// free credit and P to its PoP's: run each on m before building the next
// (next returns false after the last).
func scriptSteps(m *Machine, seed uint64, unit int64) (next func() (scriptCall, bool)) {
	rng := rand.New(rand.NewPCG(seed, 3))
	const pops, window = 3, 1000
	keys := make([]string, 14)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	type pop struct {
		inc       uint64
		skew      int64
		seq, dseq map[int]uint64
		credit    int64
		ppops     int
	}
	ps := make([]*pop, pops)
	for i := range ps {
		ps[i] = &pop{inc: uint64(i + 1), skew: rng.Int64N(600) - 300, seq: map[int]uint64{}, dseq: map[int]uint64{}, credit: rng.Int64N(3), ppops: pops + rng.IntN(2)}
	}
	base := int64(1_000_000) * window
	step := 0
	return func() (scriptCall, bool) {
		if step == 3000 {
			return scriptCall{}, false
		}
		step++
		base += rng.Int64N(window / 4)
		p := ps[rng.IntN(pops)]
		if rng.IntN(200) == 0 { // a restart
			p.inc += 100
			p.seq, p.dseq = map[int]uint64{}, map[int]uint64{}
		}
		m.cfg.Incarnation, m.cfg.FreeCredit, m.cfg.PoPs = p.inc, p.credit, p.ppops
		now := base + p.skew
		w := now / window
		g := rng.IntN(2)
		c := &Call{Group: g}
		inGroup := func() string {
			for {
				k := keys[rng.IntN(len(keys))]
				if m.group(m.bucket(k)) == g {
					return k
				}
			}
		}
		win := func() int64 { return w - 3 + rng.Int64N(7) }
		item := func() Item {
			k := inGroup()
			it := Item{Key: k, Bucket: m.bucket(k), Want: rng.Int64N(6 * unit), Floor: rng.Int64N(int64(pops+2) * unit)}
			if rng.IntN(3) == 0 {
				it.N = 1 + rng.Int64N(3*unit)
			}
			for range rng.IntN(4) {
				it.Claims = append(it.Claims, win())
			}
			for range rng.IntN(4) {
				o := Op{X: win(), GW: win(), U: rng.Int64N(5 * unit)}
				switch rng.IntN(7) {
				case 0:
					o.X = -1
				case 1:
					o.GW, o.U = GWFree, 1
				case 2:
					o.GW = GWFallback
				case 3:
					if rng.IntN(4) == 0 {
						o.GW = GWReset
					}
				}
				it.Ops = append(it.Ops, o)
			}
			return it
		}
		switch r := rng.IntN(10); {
		case r < 3: // a decision
			it := item()
			it.N = 1 + rng.Int64N(3*unit)
			if rng.IntN(2) == 0 {
				it.Claims, it.Ops = nil, nil
			}
			c.Items = []Item{it}
			c.hotWin = -1
			if rng.IntN(3) == 0 { // one that carries a report: its own sequence
				c.guard = "dseq"
				p.dseq[g]++
				c.Seq = p.dseq[g]
				if rng.IntN(4) == 0 && c.Seq > 3 { // a late or repeated one
					c.Seq -= uint64(rng.IntN(3))
				}
			}
		case r == 3: // a peek
			k := inGroup()
			c.Items = []Item{{Key: k, Bucket: m.bucket(k)}}
			c.hotWin = -1
		default: // a batch, some of them retries or older ones
			switch r := rng.IntN(10); {
			case r == 0 && p.seq[g] > 0:
			case r == 1 && p.seq[g] > 1:
				c.Seq = p.seq[g] - 1
			default:
				p.seq[g]++
			}
			if c.Seq == 0 {
				c.Seq = p.seq[g]
			}
			for range 1 + rng.IntN(8) {
				c.Items = append(c.Items, item())
			}
			if rng.IntN(2) == 0 {
				c.Items = append(c.Items, c.Items[0]) // an identity twice
			}
			c.hotWin, c.hotCur = w-int64(rng.IntN(2)), int64(rng.IntN(4))
		}
		if rng.IntN(2) == 0 {
			c.recorded = w + 2
		}
		if rng.IntN(4) == 0 { // an announcement, some of them stale
			c.announce = w - 2 + rng.Int64N(5)
		}
		return scriptCall{c, now}, true
	}
}

// runSteps runs every call of scriptSteps(m, seed, unit) through the
// script on rdb, in order, requiring each to run, and hands each step's
// number, call and reply to each.
func runSteps(t *testing.T, rdb *redis.Client, m *Machine, seed uint64, unit int64, each func(step int, sc scriptCall, res *Result)) {
	t.Helper()
	next := scriptSteps(m, seed, unit)
	for step := 0; ; step++ {
		sc, ok := next()
		if !ok {
			return
		}
		res, err := Exec(context.Background(), rdb, m, sc.c, sc.now)
		require.NoError(t, err, "step %d: the script runs", step)
		each(step, sc, res)
	}
}

// stepsMachine is the Machine scriptSteps configures call by call.
func stepsMachine(t testing.TB, unit int64) *Machine {
	t.Helper()
	// An hour of slack keeps every key for the test (see matchReference).
	m, err := NewMachine(Config{PoP: "p", Incarnation: 1, FreeCredit: 1, Limit: core.PerWindow(12*unit, time.Second),
		PoPs: 3, Buckets: 3, Groups: 2, Namespace: "ns", ExpirySlack: time.Hour})
	require.NoError(t, err, "a valid config")
	return m
}

// keyspace returns every key of rdb, sorted, with its DUMP.
func keyspace(t testing.TB, rdb *redis.Client) (keys []string, dumps []string) {
	t.Helper()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, "*").Result()
	require.NoError(t, err, "KEYS")
	sort.Strings(keys)
	for _, k := range keys {
		d, err := rdb.Dump(ctx, k).Result()
		require.NoError(t, err, "DUMP %s", k)
		dumps = append(dumps, d)
	}
	return keys, dumps
}

// TestScriptWritesPinned runs scriptSteps of a fixed seed through the
// script on a fresh server and requires, as digests pinned from the
// script as it was when the layout was last changed (the writes' digests
// pinned again when a call stopped setting the expiry of an epoch hash
// it had found fields in: those PEXPIREs alone left the writes, the
// replies and every key's DUMP the same; the replies pinned again when
// a wait came to count the windows after w with their reservations, the
// writes and DUMPs the same), the same replies,
// the same commands the script wrote, in order, with their arguments
// (MONITOR: key names, each field's MessagePack bytes, every TTL, the
// hot set's orders; all but the PEXPIRE of the '<prefix>:fc' hash,
// which follows a PTTL of the server's own clock), and the same DUMP of
// every key at the end, each key with an expiry (a write path that never
// sets one leaves a key forever). A change of the script that keeps its answers
// and its stored bytes keeps them; it catches any byte written
// differently, a TTL or a write more or less, and any answer changed.
func TestScriptWritesPinned(t *testing.T) {
	for _, tc := range []struct {
		unit            int64
		replies, writes string
	}{
		{1, "232607046a620895", "c1c30181a75d63cd"},
		{30_000, "d3b4684ad805ec29", "b89fff32d2931f5a"},
	} {
		t.Run(fmt.Sprintf("unit %d", tc.unit), func(t *testing.T) {
			rdb, p := redistest.Client(t)
			ctx := context.Background()
			writes := monitorWrites(t, p.Addr, rdb)
			m := stepsMachine(t, tc.unit)
			replies := fnv.New64a()
			runSteps(t, rdb, m, 20261206, tc.unit, func(_ int, _ scriptCall, res *Result) {
				// as printed before ItemResult had PeekWait (these steps'
				// peeks ask about no units: it is 0 in every reply)
				fmt.Fprintln(replies, strings.ReplaceAll(fmt.Sprintf("%+v", *res), " PeekWait:0", ""))
			})
			w := fnv.New64a()
			ws := writes()
			for _, l := range ws {
				fmt.Fprintln(w, l)
			}
			keys, dumps := keyspace(t, rdb)
			for i, k := range keys {
				fmt.Fprintf(w, "%q %q\n", k, dumps[i])
				assert.Positive(t, rdb.PTTL(ctx, k).Val(), "key %s ends with an expiry", k)
			}
			t.Logf("%d writes, %d keys", len(ws), len(keys))
			assert.Equal(t, tc.replies, fmt.Sprintf("%016x", replies.Sum64()), "replies")
			assert.Equal(t, tc.writes, fmt.Sprintf("%016x", w.Sum64()), "writes and DUMPs")
		})
	}
}
