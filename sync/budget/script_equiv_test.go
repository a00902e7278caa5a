package budget

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refScript is the budget script as first written (one "C:G:K" field per
// identity in each window's bucket hash, five HGETs per item), kept as
// the reference the current script must answer exactly like.
func refScript(t testing.TB) *redis.Script {
	t.Helper()
	src, err := os.ReadFile("testdata/budget_ref.lua")
	require.NoError(t, err, "the reference script testdata/budget_ref.lua")
	return redis.NewScript(string(src))
}

// execRef runs call c on the reference script, the same arguments Exec
// sends, and parses its reply.
func execRef(ctx context.Context, rdb redis.Scripter, ref *redis.Script, m *Machine, c *Call, now int64) (*Result, error) {
	keys, args := m.encode(c, now)
	v, err := ref.Run(ctx, rdb, keys, args...).Slice()
	if err != nil {
		return nil, err
	}
	return parse(v, c.Items, m.cfg.Buckets)
}

// refState reads identity key's C, G, K of window x in the reference
// layout (a hash per bucket and window, "{ns:g<group>}:b<b>:<x>").
func refState(t testing.TB, rdb *redis.Client, m *Machine, key string, x int64) cgk {
	t.Helper()
	b := m.bucket(key)
	k := m.tag(m.group(b)) + ":b" + strconv.Itoa(b) + ":" + strconv.FormatInt(x, 10)
	v, err := rdb.HGet(context.Background(), k, key).Result()
	if err == redis.Nil {
		return cgk{}
	}
	require.NoError(t, err, "HGET of %s window %d (reference layout)", key, x)
	var s cgk
	_, err = fmt.Sscanf(v, "%d:%d:%d", &s.C, &s.G, &s.K)
	require.NoError(t, err, "reference value %q is C:G:K", v)
	return s
}

// TestScriptMatchesReference runs random calls through the current script
// and the reference script on the same Redis (two namespaces) and requires
// the same replies (hot lists as sets) and, after every call, the same
// C, G, K of every identity the call names in every window from w−3 to
// w+3. The calls are built to reach every branch, not to look like a
// Machine's: PoPs
// with clocks up to 0.6 windows apart, retried and older sequence
// numbers, decisions, claims and ops of windows w−3..w+3 (spends of any
// grant window, returns, free credit, fallback), items of every grant
// divisor (0: the equal share, 1: owned, granted their want up to the
// headroom, and those between), an identity twice in a
// batch, restarts (a new incarnation), PoPs of different free credit
// announcing the windows they may spend it in (some already past), and
// calls whose decisions are taken at an age before now (Call.age), some
// reaching back before Redis' window.
func TestScriptMatchesReference(t *testing.T) {
	// unit scales the limit and every count: 1 keeps them small (one byte
	// each in the layout's encoding), 30,000 takes them to three and five.
	for _, unit := range []int64{1, 30_000} {
		t.Run(fmt.Sprintf("unit %d", unit), func(t *testing.T) { matchReference(t, unit) })
	}
}

func matchReference(t *testing.T, unit int64) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	ref := refScript(t)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	const pops, window = 3, 1000
	max := 12 * unit
	keys := make([]string, 14)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	type pop struct {
		inc    uint64
		skew   int64
		seq    map[int]uint64
		credit int64 // its FreeCredit: PoPs may differ (Redis counts who announced, lease.go)
	}
	// The calls run on a made-up clock that moves about 375 s over the
	// test, while Redis expires keys on its own clock: with the default
	// slack a key's TTL is a few seconds of real time, which a loaded
	// machine can spend between two steps, so a key the made-up clock
	// still reads could expire in one layout and not the other. An hour of
	// slack keeps every key for the test; expiry is not what it compares.
	machine := func(ns string, inc uint64) *Machine {
		m, err := NewMachine(Config{PoP: "p", Incarnation: inc, FreeCredit: 1, Limit: core.PerWindow(max, window*time.Millisecond),
			PoPs: pops, Buckets: 3, Groups: 2, Namespace: ns, ExpirySlack: time.Hour})
		require.NoError(t, err, "a valid config")
		return m
	}
	ps := make([]*pop, pops)
	for i := range ps {
		ps[i] = &pop{inc: uint64(i + 1), skew: rng.Int64N(600) - 300, seq: map[int]uint64{}, credit: rng.Int64N(3)}
	}
	base := int64(1_000_000) * window
	cur, old := machine("cur", 1), machine("ref", 1)
	for step := range 3000 {
		base += rng.Int64N(window / 4)
		p := ps[rng.IntN(pops)]
		if rng.IntN(200) == 0 { // a restart
			p.inc += 100
			p.seq = map[int]uint64{}
		}
		cur.cfg.Incarnation, old.cfg.Incarnation = p.inc, p.inc
		cur.cfg.FreeCredit, old.cfg.FreeCredit = p.credit, p.credit
		now := base + p.skew
		w := now / window
		g := rng.IntN(2)
		c := &Call{Group: g}
		inGroup := func() string {
			for {
				k := keys[rng.IntN(len(keys))]
				if cur.group(cur.bucket(k)) == g {
					return k
				}
			}
		}
		win := func() int64 { return w - 3 + rng.Int64N(7) }
		if rng.IntN(5) == 0 { // a decision
			k := inGroup()
			c.Items = []Item{{Key: k, Bucket: cur.bucket(k), N: 1 + rng.Int64N(3*unit), Want: rng.Int64N(3 * unit), Floor: rng.Int64N(int64(pops+2) * unit)}}
			c.Items[0].Divisor = rng.Int64N(4*pops + 1)
		} else {
			switch r := rng.IntN(10); {
			case r == 0 && p.seq[g] > 0: // a retry
			case r == 1 && p.seq[g] > 1: // an older batch
				c.Seq = p.seq[g] - 1
			default:
				p.seq[g]++
			}
			if c.Seq == 0 {
				c.Seq = p.seq[g]
			}
			for range 1 + rng.IntN(6) {
				k := inGroup()
				it := Item{Key: k, Bucket: cur.bucket(k), Want: rng.Int64N(6 * unit), Floor: rng.Int64N(int64(pops+2) * unit), Divisor: rng.Int64N(4*pops + 1)}
				if rng.IntN(8) == 0 {
					it.N = 1 + rng.Int64N(2*unit)
				}
				for range rng.IntN(4) {
					it.Claims = append(it.Claims, win())
				}
				for range rng.IntN(4) {
					o := Op{X: win(), GW: win(), U: rng.Int64N(5 * unit)}
					switch rng.IntN(6) {
					case 0:
						o.X = -1
					case 1:
						o.GW, o.U = GWFree, 1
					case 2:
						o.GW = GWFallback
					}
					it.Ops = append(it.Ops, o)
				}
				c.Items = append(c.Items, it)
			}
		}
		if rng.IntN(4) == 0 { // an announcement, some of them stale
			c.announce = w - 2 + rng.Int64N(5)
		}
		if rng.IntN(2) == 0 { // decisions taken at an instant before now, some before Redis' window
			c.age = rng.Int64N(window / 2)
		}
		want, err := execRef(ctx, rdb, ref, old, c, now)
		require.NoError(t, err, "step %d: the reference script runs", step)
		got, err := Exec(ctx, rdb, cur, c, now)
		require.NoError(t, err, "step %d: the script runs", step)
		slices.SortFunc(want.Hot, cmpHot)
		slices.SortFunc(got.Hot, cmpHot)
		require.Equal(t, want, got, "step %d (seed %d): reply to %+v at now %d", step, seed, c, now)
		seen := map[string]bool{}
		for _, it := range c.Items {
			k := it.Key
			if seen[k] {
				continue
			}
			seen[k] = true
			for x := w - 3; x <= w+3; x++ {
				require.Equal(t, refState(t, rdb, old, k, x), readState(t, rdb, cur, k, x),
					"step %d (seed %d): state of %s in window %d (w%+d) after %+v", step, seed, k, x, x-w, c)
			}
		}
	}
	n, err := rdb.DBSize(ctx).Result()
	require.NoError(t, err)
	assert.Positive(t, n, "the calls wrote state")
}

func cmpHot(a, b HotKey) int {
	if a.Bucket != b.Bucket {
		return a.Bucket - b.Bucket
	}
	if a.Key < b.Key {
		return -1
	}
	if a.Key > b.Key {
		return 1
	}
	return 0
}
