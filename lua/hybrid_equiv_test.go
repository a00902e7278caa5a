package lua

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestHybridScriptsMatchReference runs random calls of the hybrid's scripts
// and of their previous versions (kept below verbatim: a Redis call per
// field read, an HGETALL for every total and every reply) on two databases
// of one server, and requires the same replies (Redis' clock aside), the
// same hashes and the same TTLs: the scripts were rewritten for Redis CPU
// alone. Each call sets its own TTL, so a PEXPIRE made by one version and
// not by the other shows. Fields are compared in order for a listpack hash
// (every hash the hybrid makes); a hash table's order (a hash of more than
// hash-max-listpack-entries fields or with a string over 64 bytes) depends
// on how far Redis has rehashed it, which the previous version's extra
// lookups moved on, so there only the fields and values are compared. In
// every case each reply of the current version must be, in order, the
// HGETALL that follows it.
func TestHybridScriptsMatchReference(t *testing.T) {
	proc := redistest.Start(t)
	// RESP2: HGETALL as the scripts see it, a list in the hash's order.
	c := redis.NewClient(&redis.Options{Addr: proc.Addr, Protocol: 2})
	ref := redis.NewClient(&redis.Options{Addr: proc.Addr, Protocol: 2, DB: 1})
	t.Cleanup(func() { c.Close(); ref.Close() })
	ctx := context.Background()
	type pair struct{ cur, ref *redis.Script }
	scripts := map[string]pair{}
	for name, old := range map[string]string{"hybrid_decide": legacyDecide, "hybrid_reconcile": legacyReconcile, "hybrid_escrow": legacyEscrow} {
		src, err := Source(name)
		require.NoError(t, err)
		scripts[name] = pair{redis.NewScript(pexpireLog + src), redis.NewScript(pexpireLog + old)}
	}
	listpack := 128
	if v, err := c.ConfigGet(ctx, "hash-max-listpack-entries").Result(); err == nil {
		if n, err := strconv.Atoi(v["hash-max-listpack-entries"]); err == nil {
			listpack = n
		}
	}
	// -short makes 400 calls per seed, or more (up to the full 1000) until
	// every case the generator must reach has come up.
	calls := 1000
	if testing.Short() {
		calls = 400
	}
	for seed := uint64(1); seed <= 3; seed++ {
		g := newCallGen(seed, listpack)
		c.FlushAll(ctx)
		made := 0
		for i := 0; i < calls || i < 1000 && !g.covered(); i++ {
			made++
			name, keys, args := g.next(i)
			s := scripts[name]
			got, gerr := s.cur.Run(ctx, c, keys, args...).Result()
			where := fmt.Sprintf("seed %d call %d %s keys %q args %v", seed, i, name, keys, args)
			if gerr == nil {
				repliesAreHGETALL(t, ctx, c, name, keys, got, where)
			}
			want, werr := s.ref.Run(ctx, ref, keys, args...).Result()
			require.Equal(t, werr == nil, gerr == nil, "%s: error %v, reference %v", where, gerr, werr)
			require.False(t, gerr != nil && scriptError(gerr) != scriptError(werr), "%s: error %v, reference %v", where, gerr, werr)
			if gerr != nil {
				g.errors++
			} else if name == "hybrid_decide" {
				if v, _ := got.([]any); len(v) > 0 && v[0] == int64(1) {
					g.admits++
				}
			} else {
				got, want = dropClock(t, got), dropClock(t, want)
			}
			require.Equal(t, unorderTables(want, listpack), unorderTables(got, listpack), "%s:\n reply     %v\n reference %v", where, got, want)
			for _, k := range keys {
				sameKey(t, ctx, c, ref, k, where)
			}
		}
		require.True(t, g.covered(), "seed %d: the generator missed a case: %+v", seed, *g)
		t.Logf("seed %d: %d calls, %d admissions, %d errors (both versions), %d hashes past %d fields, %d long ids, %d keys named twice, %d counts past 2^53, 10^15 or 10^17",
			seed, made, g.admits, g.errors, g.bigHashes, listpack, g.longIDs, g.dupKeys, g.huge)
	}
}

// repliesAreHGETALL requires every HGETALL of a reply of the current
// version to be, in order, what HGETALL returns right after the call: both
// of a decision's, and a batch's of each key named once (a key named
// twice was read in between).
func repliesAreHGETALL(t *testing.T, ctx context.Context, c *redis.Client, name string, keys []string, reply any, where string) {
	t.Helper()
	v, _ := reply.([]any)
	at := map[string]int{} // key -> index in the reply of its HGETALL
	switch name {
	case "hybrid_decide":
		if keys[0] != keys[1] {
			at[keys[0]], at[keys[1]] = 2, 4
		}
	case "hybrid_reconcile":
		for i, k := range keys {
			at[k] = 2*i + 1
		}
	case "hybrid_escrow":
		for i := 0; i < len(keys); i += 3 {
			at[keys[i]], at[keys[i+1]] = 7*i/3+1, 7*i/3+3
		}
	}
	named := map[string]int{}
	for _, k := range keys {
		named[k]++
	}
	for k, i := range at {
		if named[k] > 1 {
			continue
		}
		h, err := c.Do(ctx, "HGETALL", k).Slice()
		require.NoError(t, err, "%s: HGETALL %s after the call", where, k)
		require.Less(t, i, len(v), "%s: reply %v has no HGETALL of %s at %d", where, v, k, i)
		require.True(t, sameList(v[i], h), "%s: reply for %s\n %v\nHGETALL after it\n %v (%v)", where, k, v[i], h, err)
	}
}

// sameList is reflect.DeepEqual, but a nil list equals an empty one.
func sameList(a, b any) bool {
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == 0 && len(bs) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// unorderTables returns v with every HGETALL in it that is of a hash
// table (see TestHybridScriptsMatchReference) sorted by field.
func unorderTables(v any, listpack int) any {
	s, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(s))
	for i, e := range s {
		out[i] = unorderTables(e, listpack)
	}
	if len(s)%2 != 0 || !isTable(s, listpack) {
		return out
	}
	pairs := make([][2]any, 0, len(s)/2)
	for i := 0; i < len(s); i += 2 {
		pairs = append(pairs, [2]any{s[i], s[i+1]})
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i][0].(string) < pairs[j][0].(string) })
	for i, p := range pairs {
		out[2*i], out[2*i+1] = p[0], p[1]
	}
	return out
}

// isTable reports whether s is an HGETALL of a hash table: strings only,
// more fields than listpack or one over 64 bytes.
func isTable(s []any, listpack int) bool {
	long := len(s)/2 > listpack
	for _, e := range s {
		str, ok := e.(string)
		if !ok {
			return false
		}
		long = long || len(str) > 64
	}
	return long
}

// scriptError is an error's message without the script's name and line.
func scriptError(err error) string {
	s, _, _ := strings.Cut(err.Error(), " script: ")
	return s
}

// dropClock removes the last element of a reply (Redis' TIME).
func dropClock(t *testing.T, v any) any {
	s, ok := v.([]any)
	require.True(t, ok, "reply %v: not a list", v)
	require.NotEmpty(t, s, "reply %v: not a list", v)
	return s[:len(s)-1]
}

// pexpireLog is put before both versions of a script: it shadows redis.call
// with one that also records, for every PEXPIRE, the key's TTL argument in
// the hash pexpireKey (field: the key). The two versions run on two
// databases a moment apart, so their keys' remaining TTLs differ by however
// long the machine took between the calls; the argument each one last gave
// does not, and since every call of the test gives its own TTL (the call's
// number in it), equal arguments mean the same call set both keys' expiry.
const pexpireLog = `local redis = setmetatable({call = function(cmd, ...)
  local r = redis.call(cmd, ...)
  if cmd == 'PEXPIRE' then
    local a = {...}
    redis.call('HSET', '` + pexpireKey + `', a[1], a[2])
  end
  return r
end}, {__index = redis})
`

// pexpireKey is the hash where pexpireLog records the last PEXPIRE argument
// of each key; it is named by no call of the test.
const pexpireKey = "edgelimit-test:pexpire"

// sameKey requires k to hold the same in both databases: type, encoding,
// HGETALL (see TestHybridScriptsMatchReference for the order), whether it
// has a TTL, and the TTL argument of the last PEXPIRE that set it (see
// pexpireLog: not two wall-clock readings).
func sameKey(t *testing.T, ctx context.Context, c, ref *redis.Client, k, where string) {
	t.Helper()
	typ, rtyp := c.Type(ctx, k).Val(), ref.Type(ctx, k).Val()
	require.Equal(t, rtyp, typ, "%s: %s is a %s, reference %s", where, k, typ, rtyp)
	if typ != "hash" {
		return
	}
	enc, renc := c.ObjectEncoding(ctx, k).Val(), ref.ObjectEncoding(ctx, k).Val()
	h, err := c.Do(ctx, "HGETALL", k).Slice()
	rh, rerr := ref.Do(ctx, "HGETALL", k).Slice()
	require.NoError(t, err, "%s: HGETALL %s", where, k)
	require.NoError(t, rerr, "%s: HGETALL %s, reference", where, k)
	if enc == "hashtable" {
		h, rh = unorderTables(h, 0).([]any), unorderTables(rh, 0).([]any)
	}
	require.Equal(t, renc, enc, "%s: %s holds (%s)\n %v\nreference (%s)\n %v", where, k, enc, h, renc, rh)
	require.True(t, sameList(h, rh), "%s: %s holds (%s)\n %v\nreference (%s)\n %v", where, k, enc, h, renc, rh)
	// Every TTL given is at least 100 s and each seed starts from an empty
	// server, so no key expires during a seed's calls on any machine that
	// runs them in less: a key without a TTL here was never given one.
	ttl, rttl := c.PTTL(ctx, k).Val(), ref.PTTL(ctx, k).Val()
	require.Equal(t, rttl < 0, ttl < 0, "%s: %s TTL %v, reference %v", where, k, ttl, rttl)
	if ttl < 0 {
		return
	}
	arg, err := c.HGet(ctx, pexpireKey, k).Result()
	require.NoError(t, err, "%s: %s has a TTL, but no PEXPIRE of it was recorded", where, k)
	rarg, err := ref.HGet(ctx, pexpireKey, k).Result()
	require.NoError(t, err, "%s: %s has a TTL, but no PEXPIRE of it was recorded, reference", where, k)
	require.Equal(t, rarg, arg, "%s: %s was last given PEXPIRE %s ms, reference %s ms (remaining %v and %v)", where, k, arg, rarg, ttl, rttl)
}

// callGen draws calls of the three scripts on a few identities, windows
// and PoPs, with counts in a small range (so a count often equals the
// stored one) and now and then: a PoP id over 64 bytes or a hash of more
// than hash-max-listpack-entries fields (Redis then keeps a hash table, not a listpack), a key
// named twice, a count past 2^53 or 10^15, a count written "007".
type callGen struct {
	r                                                 *rand.Rand
	now                                               int64
	listpack                                          int
	errors, admits, bigHashes, longIDs, dupKeys, huge int
}

func newCallGen(seed uint64, listpack int) *callGen {
	return &callGen{r: rand.New(rand.NewPCG(seed, 42)), now: 1_700_000_000_000, listpack: listpack}
}

var shortIDs = []string{"fra#0a1b2c3d", "iad#00000001", "sin#ffffffff", "gru#12345678", "syd#9abcdef0"}

func (g *callGen) id() string {
	if g.r.IntN(60) == 0 {
		g.longIDs++
		return "a-pop-whose-name-is-long-enough-to-make-its-counter-id-over-64-bytes#" + strconv.Itoa(g.r.IntN(3))
	}
	return shortIDs[g.r.IntN(len(shortIDs))]
}

// count draws a count for identity u; only "u3" gets counts past 2^53 or
// 10^15 (they would soon deny every call of the others).
func (g *callGen) count(u string) string {
	switch g.r.IntN(30) {
	case 0, 1:
		if u == "u3" {
			g.huge++
			return strconv.FormatInt(1<<53-2+int64(g.r.IntN(4)), 10)
		}
	case 2:
		if u == "u3" {
			g.huge++
			return strconv.FormatInt([]int64{1e15, 1e17}[g.r.IntN(2)]+int64(g.r.IntN(4)), 10)
		}
	case 3:
		return "00" + strconv.Itoa(g.r.IntN(10))
	}
	return strconv.Itoa(g.r.IntN(10))
}

func key(ident string, idx int64) string { return fmt.Sprintf("el:{k:%s}:%d", ident, idx) }

// window draws a window index for call i: the windows move on every 200
// calls, so the grow-only counts start again from nothing.
func (g *callGen) window(i int) int64 { return int64(1 + i/200 + g.r.IntN(2)) }

func (g *callGen) ident() string { return "u" + strconv.Itoa(g.r.IntN(4)) }

// covered reports whether every case the test requires has come up.
func (g *callGen) covered() bool {
	return g.bigHashes > 0 && g.longIDs > 0 && g.dupKeys > 0 && g.huge > 0 && g.admits > 0 && g.errors > 0
}

func (g *callGen) next(i int) (string, []string, []any) {
	ttl := strconv.Itoa(100_000 + 1000*i)
	g.now += int64(g.r.IntN(200))
	switch g.r.IntN(3) {
	case 0:
		idx := g.window(i)
		u := g.ident()
		keys := []string{key(u, idx), key(u, idx-1)}
		if g.r.IntN(50) == 0 {
			keys[1] = keys[0]
			g.dupKeys++
		}
		args := []any{g.id(), ttl, 1 + g.r.IntN(3), g.r.IntN(1001), 1000, 20 + g.r.IntN(150), g.count(u), g.count(u), strconv.Itoa(g.r.IntN(2))}
		peers := g.r.IntN(9)
		if u == "u3" && g.r.IntN(25) == 0 {
			peers = g.listpack + 10
			args[8] = "1"
			g.bigHashes++
		}
		if u == "u3" && g.r.IntN(10) == 0 {
			// past 2^53 by HINCRBY
			args[2], args[5] = 1<<53-int64(g.r.IntN(3)), int64(1)<<60
		}
		for p := 0; p < peers; p++ {
			pid := g.id()
			if peers > 50 {
				pid = "p#" + strconv.Itoa(p)
			}
			args = append(args, pid, g.count(u), g.count(u))
		}
		return "hybrid_decide", keys, args
	case 1:
		var keys, idents []string
		args := []any{g.id(), ttl}
		for n := 1 + g.r.IntN(5); n > 0; n-- {
			if len(keys) > 0 && g.r.IntN(4) == 0 {
				j := g.r.IntN(len(keys))
				keys, idents = append(keys, keys[j]), append(idents, idents[j])
				g.dupKeys++
			} else {
				u := g.ident()
				keys, idents = append(keys, key(u, g.window(i)-int64(g.r.IntN(2)))), append(idents, u)
			}
			args = append(args, g.count(idents[len(idents)-1]))
		}
		return "hybrid_reconcile", keys, args
	default:
		var keys []string
		args := []any{g.id(), ttl, g.now, g.r.IntN(1001), 1000, 20 + g.r.IntN(150), 100 + g.r.IntN(900)}
		for n := 1 + g.r.IntN(3); n > 0; n-- {
			u, idx := g.ident(), g.window(i)
			keys = append(keys, key(u, idx), key(u, idx-1), fmt.Sprintf("el:{k:%s}:g", u))
			args = append(args, g.count(u), g.count(u), g.r.IntN(13)-1, (i+n)%2) // -1: ownership alone; then believes it owns (not drawn: the draws stay those of the tests before)
		}
		return "hybrid_escrow", keys, args
	}
}

// The scripts as they were before each hash was read once (commit d1b7ced),
// with one change since made to both versions: the escrow room is
// math.ceil, not math.floor, of what the limit leaves (the article's rule,
// see hybrid_escrow.lua).
const legacyDecide = `-- edgelimit hybrid decide: merge the caller's view of one identity (its own
-- cumulative counts and the other PoPs' it knows) into the per-window hashes
-- by maximum, compute the global sliding-window estimate from every PoP's
-- field, and admit n units by adding them to the caller's field.
--
-- KEYS[1], KEYS[2] : hashes of the current and the previous window.
-- ARGV[1] id, ARGV[2] PEXPIRE ms, ARGV[3] n, ARGV[4] elapsed ms in the
-- current window, ARGV[5] window ms, ARGV[6] max, ARGV[7] own current,
-- ARGV[8] own previous, ARGV[9] "1" to write the peers' counts (max-merge)
-- or "0" to only weigh them in the estimate, then triples (peer id,
-- current, previous).
-- Reply: {allowed 0|1, own prior cur, HGETALL cur, own prior prev, HGETALL prev}
-- The estimate uses the same float operation order as core.SlidingEstimate.
local id, ttl = ARGV[1], ARGV[2]
local n, elapsed, w, max = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])

local function merge(k, f, v)
  local old = tonumber(redis.call('HGET', k, f) or 0)
  if tonumber(v) > old then
    redis.call('HSET', k, f, v)
    redis.call('PEXPIRE', k, ttl)
  end
  return old
end

local function total(k)
  local all = redis.call('HGETALL', k)
  local s = 0
  for i = 2, #all, 2 do s = s + tonumber(all[i]) end
  return s
end

local prior = {merge(KEYS[1], id, ARGV[7]), merge(KEYS[2], id, ARGV[8])}
local extra = {0, 0}
for i = 10, #ARGV, 3 do
  if ARGV[9] == '1' then
    merge(KEYS[1], ARGV[i], ARGV[i + 1])
    merge(KEYS[2], ARGV[i], ARGV[i + 2])
  else
    for w = 1, 2 do
      local v = tonumber(ARGV[i + w])
      local old = tonumber(redis.call('HGET', KEYS[w], ARGV[i]) or 0)
      if v > old then extra[w] = extra[w] + (v - old) end
    end
  end
end
local cur, prev = total(KEYS[1]) + extra[1], total(KEYS[2]) + extra[2]
local est = cur + prev * (w - elapsed) / w
local allowed = 0
if est < max - n + 1 then
  redis.call('HINCRBY', KEYS[1], id, n)
  redis.call('PEXPIRE', KEYS[1], ttl)
  allowed = 1
end
return {allowed, prior[1], redis.call('HGETALL', KEYS[1]), prior[2], redis.call('HGETALL', KEYS[2])}
`

const legacyReconcile = `-- edgelimit hybrid reconcile: merge one PoP's cumulative counts into the
-- per-(identity, window) hashes by maximum, then read every PoP's field back.
-- Grow-only: a field never decreases, so a repeated or reordered call is
-- harmless.
--
-- KEYS[i]   : hash of one (identity, window); field = PoP counter id.
-- ARGV[1]   : this PoP's counter id (the field written).
-- ARGV[2]   : PEXPIRE in ms for hashes written (two windows).
-- ARGV[2+i] : this PoP's cumulative count for KEYS[i] ("0" = read only).
-- Reply     : for each key, its field's value before the merge (0 when
--             missing) followed by HGETALL of the key after the merge; then
--             Redis' clock (TIME) in ms, for callers that keep their windows
--             on it.
local id, ttl = ARGV[1], ARGV[2]
local out = {}
for i = 1, #KEYS do
  local k = KEYS[i]
  local v = ARGV[2 + i]
  local prior = tonumber(redis.call('HGET', k, id) or 0)
  if tonumber(v) > prior then
    redis.call('HSET', k, id, v)
    redis.call('PEXPIRE', k, ttl)
  end
  out[#out + 1] = prior
  out[#out + 1] = redis.call('HGETALL', k)
end
local t = redis.call('TIME')
out[#out + 1] = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return out
`

const legacyEscrow = `-- edgelimit hybrid escrow: hybrid_reconcile.lua for a batch of identities
-- (merge this PoP's cumulative counts of two windows by maximum, read every
-- PoP's fields back), plus escrowed allowances: for each identity a hash
-- holds every PoP's outstanding allowance, the units it may admit without
-- asking, as "units:expiry_ms". The units this call reports as new (the
-- field's growth) leave the caller's allowance, expired allowances are
-- dropped (one lease after their expiry), and the caller is granted up to ` + "`" + `want` + "`" + ` more units of what the
-- limit leaves once the global sliding estimate and every outstanding
-- allowance are counted:
--   estimate + sum(allowances) <= max
-- holds after every call. The estimate never grows without an admission
-- (the previous window's weight only decays), so what this holds at one
-- instant holds at every later one.
--
-- KEYS[3i-2], KEYS[3i-1], KEYS[3i]: item i's hashes of its window, of the
-- window before, and of its allowances.
-- ARGV[1] id, ARGV[2] PEXPIRE ms, ARGV[3] now ms (the caller's clock),
-- ARGV[4] elapsed ms in the window, ARGV[5] window ms, ARGV[6] max,
-- ARGV[7] lease ms (how long a grant lasts unless renewed), then per item
-- ARGV[8+4(i-1)..]: own current, own previous, want, believes it owns.
-- Reply per item: prior cur, HGETALL cur, prior prev, HGETALL prev,
-- allowance (units), allowance expiry (ms); then Redis' clock (TIME) in ms.
-- The estimate uses the same float operation order as core.SlidingEstimate.
local id, ttl = ARGV[1], ARGV[2]
local now, elapsed, w, max, lease = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])

local function merge(k, v)
  local old = tonumber(redis.call('HGET', k, id) or 0)
  if tonumber(v) > old then
    redis.call('HSET', k, id, v)
    redis.call('PEXPIRE', k, ttl)
  end
  return old
end

local function total(k)
  local all = redis.call('HGETALL', k)
  local s = 0
  for i = 2, #all, 2 do s = s + tonumber(all[i]) end
  return s
end

local function alone(k)
  local a = redis.call('HGETALL', k)
  for j = 1, #a, 2 do
    if a[j] ~= id and a[j + 1] ~= '0' then return false end
  end
  return true
end

local out = {}
for i = 1, #KEYS / 3 do
  local kc, kp, kg = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local a = 8 + 4 * (i - 1)
  local oc, op, want = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local believes, myexp = ARGV[a + 3] == '1', 0
  local pc, pp = merge(kc, oc), merge(kp, op)
  local spent = math.max(oc - pc, 0) + math.max(op - pp, 0)
  local mine, others, held, flag = 0, 0, false, ''
  local blocked, asked, anyOther = false, false, false
  local g = redis.call('HGETALL', kg)
  for j = 1, #g, 2 do
    local units, exp, f = string.match(g[j + 1], '^(%d+):(%d+):?([or]?)$')
    units, exp = tonumber(units), tonumber(exp)
    if not units or not exp or exp + lease <= now then
      redis.call('HDEL', kg, g[j])
    elseif g[j] == id then
      mine, held, flag, myexp = units, true, f, exp
    else
      others, anyOther = others + units, true
      blocked = blocked or f ~= ''
      asked = asked or exp > now
    end
  end
  mine = math.max(mine - spent, 0)
  local exp = now + lease
  if flag == 'o' then
    mine, flag = 0, asked and 'r' or 'o'
  elseif flag == 'r' and believes then
    mine, exp = 0, myexp
  elseif blocked then
    flag = ''
  elseif want ~= 0 and not anyOther and alone(kc) and alone(kp) then
    mine, flag = 0, 'o'
  else
    flag = ''
    local est = total(kc) + total(kp) * (w - elapsed) / w
    local room = math.ceil(max - est - others - mine)
    if room > 0 and want > 0 then
      mine = mine + math.min(room, want)
    end
  end
  if mine > 0 or flag ~= '' or want ~= 0 then
    local v = mine .. ':' .. exp
    if flag ~= '' then v = v .. ':' .. flag end
    redis.call('HSET', kg, id, v)
    redis.call('PEXPIRE', kg, ttl)
  elseif held then
    redis.call('HDEL', kg, id)
  end
  if mine == 0 and flag ~= 'o' then exp = 0 end
  out[#out + 1] = pc
  out[#out + 1] = redis.call('HGETALL', kc)
  out[#out + 1] = pp
  out[#out + 1] = redis.call('HGETALL', kp)
  out[#out + 1] = mine
  out[#out + 1] = exp
  out[#out + 1] = flag == 'o' and 1 or 0
end
local t = redis.call('TIME')
out[#out + 1] = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return out
`
