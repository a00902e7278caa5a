-- budget.lua: the budget limiter's Redis side (package sync/budget, see
-- docs/budget.md). One call applies a batch of items of one group (one hash
-- tag): each item's report (spends, returns, free-slot claims), then its
-- decision of n units at Redis (n > 0), then its grant (want > 0). The
-- estimate repeats core.SlidingEstimate / core.SlidingAdmits exactly.
--
-- KEYS[1]: the retry guard of (incarnation, group): '{tag}:seq:<inc>' for
--          a batch, '{tag}:dseq:<inc>' for a decision call that carries
--          claims (a sent-twice claim would free another PoP's slot),
--          '{tag}:rseq:<inc>' for a Reset (kept max(4W + slack, 5 min):
--          see the guard below); it
--          names the group's slot (every key the script touches is
--          '<prefix>:b<bucket>:e<epoch>' or '<prefix>:hot:<window>' with
--          the same hash tag; see Layout below).
-- ARGV[1]  now, ms (ignored when ARGV[2] is '1': read from TIME)
-- ARGV[2]  1 to read now from the server
-- ARGV[3]  window, ms          ARGV[4] max, units per window
-- ARGV[5]  P, the PoPs         ARGV[6] c, free credit per PoP and window
-- ARGV[7]  slack, ms added to every expiry
-- ARGV[8]  prefix '{tag}'      ARGV[9] seq (0: no guard; a batch whose
--          seq is not above the highest applied, or a decision or Reset
--          whose seq is in the 32-wide window below it and was applied, or
--          is below that window, is a retry, applied no more)
-- ARGV[10] hot cursor's window (-1: a decision call, which lists none)
-- ARGV[11] hot cursor: the last hot order this PoP's group listed of that
--          window (0: none)
-- ARGV[12] the caller's incarnation (hex), naming its announcement key
-- ARGV[13] announce: the caller may spend free credit through this window
--          (its clock's numbering, as its slot claims), or 0: none;
--          counted through w + 4 at most (see "Who may spend free credit"
--          and "The count's reach" below)
-- ARGV[14] item count
-- ARGV[15] the last window this caller's checks are recorded through
--          (see "The first count": a reply to its call of window w that
--          asked a decision or a grant recorded w - 1 .. w + 2); when it
--          is w + 2 the call records nothing again
-- ARGV[16] age, ms: a decision's sliding estimate (E) is taken at
--          now - age, the instant the caller sent the request by its
--          estimate of the one-way delay, while that instant is within
--          Redis' window w (else at now), and its retry counted from that
--          instant in either case (the caller counts it from its send);
--          only more cautious than at now,
--          since the previous window weighs more then. Grants and E1, E2
--          stay at now. 0: every check at now (a batch sends 0)
-- ARGV[17] on, per item:
--   field, bucket, n, want, g, nclaims, claim windows..., nops,
--   (x, gw, u)...; g >= 1 grants want when the headroom h is at least
--   4P * want, else min(want, ceil(h / 4P)) (a quarter of an equal share)
--   while h >= g, else 0; g <= 0 divides h by d = max(1, -g) instead,
--   down to h = 1: a PoP that served more of the identity's counted units
--   asks a larger part (d < 4P), one that owns it (d = 1) its want up to
--   the headroom; g is the caller's word (a wrong one holds budget
--   others' requests wait for, never more than the headroom)
--   op: gw >= 0 takes u from G_gw; x >= 0 adds u to C_x (x = -1: a return);
--   gw = -1 is the PoP's free credit of window x, which also claims its
--   slot (K_x + 1, with u = 0 a slot given up unused; an op of a window
--   after w, stamped ahead of Redis' clock, counts its units in C_w and
--   claims no slot, so its own window's stays reserved); gw = -2 is a
--   fallback admission (C_x only); gw = -3 forgets C of every window (a
--   Reset: G and K stay, budget PoPs may still spend). An item that asks
--   nothing (want, claims and ops 0 and n <= 0: a peek) writes nothing;
--   n < 0 peeks at -n units (see the reply's allowed and grant below).
-- Returns {now, w, retried, hot cursor, announced-through (the last window
-- the caller's announcements cover, -1: none), the lease's first window
-- (the first the caller may spend free credit in, -1: none; see "The
-- first count" below), then per item: allowed (-1 none, 0, 1), grant,
-- C_w, C_{w-1}, headroom, retry} (for a peek of k = -n units, allowed is
-- whether a decision of k units would be admitted now, 1 or 0, and grant
-- the ms until they would fit, 0 when they do): retry is, for a denied decision, the ms
-- until its n units would fit if nothing changed, else, when headroom is
-- 0, until one unit would (waitFor: the first instant of this window or
-- the three after at which E, E1 and E2 of that window, its reservations
-- included, admit them), else 0. A batch
-- (seq > 0) then lists the group's hot identities of window w as
-- 'bucket|field' strings: those Redis last saw with free slots of w or
-- w+1 unclaimed and either under a quarter of the limit left or under two
-- thirds left counting only what was admitted and granted (busy), so every
-- PoP gives up its slots of them before the reservation binds. (Listed
-- only under a quarter, a burst's last units met the reservation: on
-- pop-sim's mixed 433 burst requests were denied that the exact log
-- admitted, 254 with the busy test, at 2% more items; under half of the
-- limit left, reservation counted, listed every identity Redis saw at 32
-- PoPs, where the slots alone reserve 64 units: 4.7 items per decision
-- instead of 1.0.) They are kept in the sorted set '<prefix>:hz:<w>',
-- each scored by the order it became hot in (the counter
-- '<prefix>:hz:<w>:n'); a reply lists at most 256 of those after the
-- caller's cursor (when the cursor is of window w), in that order, and
-- returns the last order listed as the new cursor, so a PoP learns each
-- hot identity once, soon after it becomes hot, at O(log H + 256) per
-- call. (A set listed 64 at a time from a rotating offset taught a PoP of
-- thousands of hot identities a few seconds late: at 1,000,000
-- identities bursts lost 1.8% of their quota.)

local tonumber, floor, ceil, mmax, mmin = tonumber, math.floor, math.ceil, math.max, math.min
local rcall, unpack, sf = redis.call, unpack, string.format
local mpack, munpack = cmsgpack.pack, cmsgpack.unpack

-- chunked runs cmd on key with the values of list, at most 1,000 at a time
-- (an even number, so HSET's field-value pairs stay whole), and returns
-- the replies concatenated: Lua's unpack stops near 8,000 values, which a
-- batch of one group reaches with thousands of identities in one bucket or
-- leaving the hot set at once.
local function chunked(cmd, key, list)
  local nl = #list
  if nl <= 1000 then
    return rcall(cmd, key, unpack(list))
  end
  local out = {}
  for i = 1, nl, 1000 do
    local part = rcall(cmd, key, unpack(list, i, mmin(i + 999, nl)))
    if type(part) == 'table' then
      for j = 1, #part do
        out[i + j - 1] = part[j]
      end
    end
  end
  return out
end

local now = ARGV[1] + 0
if ARGV[2] == '1' then
  local t = rcall('TIME')
  now = tonumber(t[1]) * 1000 + floor(tonumber(t[2]) / 1000)
end
local W = ARGV[3] + 0
local max = ARGV[4] + 0
local P = ARGV[5] + 0
local c = ARGV[6] + 0
local slack = ARGV[7] + 0
local prefix = ARGV[8]
local seq = ARGV[9] + 0
local hotWin = ARGV[10] + 0
local nitems = ARGV[14] + 0
local age = ARGV[16] + 0

local w = floor(now / W)
local elapsed = now - w * W
-- a decision's instant within w: the request's send by the caller's
-- estimate (ARGV[16]), or now when that is before w began
local decElapsed = elapsed
if age > 0 and age <= elapsed then
  decElapsed = elapsed - age
end
-- the caller's send on w's timeline (before w began when negative): a
-- decision's wait counts from it, as the caller counts its RetryAfter,
-- even when the decision is at now
local decSent = elapsed - age
local batch = seq > 0 and hotWin >= 0

-- A guard lives 4W + slack (a report's or batch's ops and claims are
-- stale by then on Redis' clock), and at least 5 minutes: a client
-- retries a call whose reply it did not read (go-redis v9's defaults: 3
-- retries, each after a 5 s read timeout, up to 1 s of backoff, 6 s of
-- pool wait, 5 dial attempts of 5 s and 5 s of write: about 130 s in
-- all, with the connection's handshake on top), and a Reset's op
-- is tied to no window, so a retry that came after its guard expired
-- would forget the counts again; on a caller's clock (tests, replays) a
-- retry carries its first now, so its ops land in their windows twice. A
-- few keys per PoP incarnation and group (about 190 B each): a live
-- incarnation rewrites its own, an ended one's stay the 5 minutes:
-- PX max(4W + slack, 300000) below.
local retried = 0
if batch then
  -- a batch: one in flight per group, so a high-water mark
  local last = tonumber(rcall('GET', KEYS[1]) or '0')
  if seq <= last then
    retried = 1
  else
    rcall('SET', KEYS[1], ARGV[9], 'PX', sf('%d', mmax(4 * W + slack, 300000))) -- seq's decimal digits
  end
elseif seq > 0 then
  -- a decision's report (or a Reset): up to 32 outstanding, in any
  -- order, so an anti-replay window: the highest number applied and a
  -- mask of the 32 numbers up to it (bit d: number hw - d applied); a
  -- number below the window is refused as applied
  local hw, mask = 0, 0
  local v = rcall('GET', KEYS[1])
  if v then
    local a, b = string.match(v, '^(%d+):(%d+)$')
    hw, mask = tonumber(a), tonumber(b)
  end
  if seq > hw then
    local shift = seq - hw
    if shift >= 32 then
      mask = 0
    else
      mask = (mask * 2 ^ shift) % 2 ^ 32
    end
    mask, hw = mask + 1, seq
  else
    local d = hw - seq
    if d >= 32 or math.floor(mask / 2 ^ d) % 2 == 1 then
      retried = 1
    else
      mask = mask + 2 ^ d
    end
  end
  if retried == 0 then
    rcall('SET', KEYS[1], string.format('%.0f:%.0f', hw, mask), 'PX', sf('%d', mmax(4 * W + slack, 300000)))
  end
end

-- Who may spend free credit: a PoP spends its free credit of window x
-- only after Redis has counted it among x's spenders (its announcement,
-- acknowledged by a reply: the PoP's lease), so the reservation need not
-- trust any caller's configuration. The group's hash '<prefix>:fc' holds,
-- per window x, field '<x>' = n * 2^32 + cx: n the incarnations that
-- announced x, cx the largest free credit among them (at most 2^32 - 1);
-- and field 'm<x>' = p * 2^32 + cm: the least PoPs (p) and the least free
-- credit (cm) of the callers whose calls have read R_x so far (every call
-- reads R of w - 1 .. w + 2). '<prefix>:fa:<incarnation>' holds
-- '<through>:<from>': the last window the incarnation announced, so each
-- is counted once per window, and the first window it may spend in. R_x,
-- the free credit PoPs may still spend in x unseen, is the larger of
-- cx * max(0, n - K_x) and the caller's c * max(0, P - K_x) (PoPs that do
-- not announce, running an earlier version, are covered by the latter as
-- before).
--
-- The first count: a check of R_x made before an incarnation was counted
-- in x did not reserve for it unless the checker's own configuration did
-- (its c * (P - K) covers n + 1 spenders of credit up to c). So a newly
-- counted window x whose 'm<x>' says an earlier check reserved less (p
-- under n + 1, or cm under the credit) moves the lease's first window
-- past x; a window no call has read yet needs nothing. In a deployment
-- whose PoPs are configured alike nothing moves, but an incarnation that
-- replaces one still counted (a restart) waits for the windows its
-- predecessor was counted in where the PoPs counted fill the record's p.
-- A renewal counts only the window three ahead, which no check has read,
-- unless it comes late (one missed, a batch run in the window after it
-- was planned) or a caller's clock runs ahead: the first window then
-- moves past that one, and the PoP keeps the windows of its lease before
-- (Machine.leaseTo).
--
-- The count's reach: an announcement past w + 4 (Redis' window w: the
-- x + 3 of a caller whose clock runs more than a window ahead of Redis')
-- is counted through w + 4 only, so a call counts at most six windows
-- (w - 1 .. w + 4) whatever the skew. (Counted to the caller's x + 3, one
-- call of a PoP 100 s ahead at 10 ms windows counted 10,005, an HMGET
-- and an HSET each; enough skew would pass lua-time-limit and block
-- Redis for everyone.) The reply's announced-through is the last window
-- counted, never the one asked, so the caller's lease covers only windows
-- Redis reserves for it: a PoP up to a window ahead is counted through
-- its x + 3 as before, one 2 to 4 windows ahead spends free credit in its
-- windows up to w + 4 and finds its lease due at every call, one further
-- ahead spends none (its windows are never counted). The expiries below
-- run from the window counted.
local through, from = -1, -1
local fk = prefix .. ':fc'
local ann = ARGV[13] + 0
if ann > 0 and c > 0 then
  local ik = prefix .. ':fa:' .. ARGV[12]
  local have = -1
  local hv = rcall('GET', ik)
  if hv then
    local a, b = string.match(hv, '^(-?%d+):(-?%d+)$')
    if a then
      have, from = tonumber(a), tonumber(b)
    else
      have = tonumber(hv) -- an earlier version's: no first window
    end
  end
  if ann > w + 4 then
    ann = w + 4 -- no further than a caller a window ahead announces (above)
  end
  if ann > have and ann >= w - 1 then
    local cc = mmin(c, 4294967295)
    local lo = mmax(have + 1, w - 1)
    if have < w - 1 then
      from = lo -- a new lease, or one that lapsed
    end
    for x = lo, ann do
      local fv = rcall('HMGET', fk, x, sf('m%d', x))
      local v = (fv[1] or 0) + 0
      local n, cx = floor(v / 4294967296), v % 4294967296
      if fv[2] then
        local mv = tonumber(fv[2])
        if n + 1 > floor(mv / 4294967296) or mmax(cx, cc) > mv % 4294967296 then
          from = mmax(from, x + 1)
        end
      end
      rcall('HSET', fk, x, string.format('%.0f', (n + 1) * 4294967296 + mmax(cx, cc)))
    end
    -- w - 2: a call planned a window earlier may still read it
    rcall('HDEL', fk, w - 3, w - 4, w - 5, sf('m%d', w - 3), sf('m%d', w - 4), sf('m%d', w - 5))
    local ttl = (ann + 2) * W - now + slack -- R_ann weighs until window ann + 1 ends
    rcall('SET', ik, string.format('%.0f:%.0f', ann, from), 'PX', ttl)
    if rcall('PTTL', fk) < ttl then
      rcall('PEXPIRE', fk, ttl)
    end
    have = ann
  end
  through = have
end
-- Layout: windows are paired, 2e and 2e + 1 forming epoch e; each bucket
-- has a hash per epoch, '<prefix>:b<bucket>:e<e>', field = identity, value
-- C, G, K of window 2e, followed by C, G, K of window 2e + 1 when that is
-- not all zero, as MessagePack integers (cmsgpack: one byte each below
-- 128). The hash expires as a whole three windows plus the slack
-- after window 2e + 1 starts (its last reader's window, 2e + 3, ends
-- the slack before): a call that writes it without having found a field
-- in it sets that expiry, one that read a field of it leaves it as it
-- is (set when that field was written). On one server's clock (the
-- Limiter's) every call sets the same instant (after a failover to a
-- master whose clock differs, a hash found since keeps the old master's
-- instant); with callers' own clocks the last caller that set it decides
-- it, and one d ahead of another sets it d sooner in the other's time:
-- the slack absorbs either difference up to its size (as when every
-- write set it). An item's five windows lie in three epochs,
-- e0 = floor((w - 2) / 2), e0 + 1 and e0 + 2.
--
-- Items are read first, each bucket's epoch hashes once for all the
-- identities the call names (HMGET; HGET for a bucket of one), applied in
-- order on those states, and written last, each hash once (HSET of its
-- changed fields, PEXPIRE); an identity named twice sees its first item's
-- changes. Hot set changes are applied at the end too, the last one of
-- each identity counting.
--
-- An identity's state is one flat array: C, G, K of window w + d at
-- 3(d + 3) + 1, + 2, + 3 (d in -3..3: the epochs' other windows are kept
-- to be written back), at 25 + d whether window w + d changed, then its
-- hot set member 'bucket|field' and its field.
--
-- Cost (docs/budget.md, "Script time"): numbers reach redis.call as '%d'
-- strings, each argument is converted once ('+ 0'), R once per item.
local ids = {}      -- 'bucket|field' -> state (a call of one item keeps none)
local bl = {}       -- buckets in order of first mention
local bf = {}       -- bucket -> its states in order of first mention
local itS, itArg = {}, {} -- per item: its state, its ARGV index
local checks = false      -- some item asks a decision (n > 0) or a grant (want > 0)
local i = 17
for n = 1, nitems do
  local f, b = ARGV[i], ARGV[i + 1]
  local id = b .. '|' .. f
  local s = ids[id]
  if not s then
    s = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
      false, false, false, false, false, false, false, id, f}
    if nitems > 1 then
      ids[id] = s
    end
    local fl = bf[b]
    if not fl then
      fl = {}
      bf[b] = fl
      bl[#bl + 1] = b
    end
    fl[#fl + 1] = s
  end
  itS[n], itArg[n] = s, i
  if not checks then
    checks = ARGV[i + 2] + 0 > 0 or ARGV[i + 3] + 0 > 0
  end
  i = i + 6 + ARGV[i + 5]
  i = i + 1 + 3 * ARGV[i]
end

-- the announced spenders of windows w - 1 .. w + 2 (nN) and their largest
-- credit (cN); anyN false when none announced. With them, when the call
-- checks (a decision or a grant reads R of w - 1 .. w + 2) and this
-- caller's earlier call of this window did not record its checks
-- (ARGV[15]), the records of those windows, then this call's recorded in
-- 'm<x>': the least PoPs and credit of the callers that read R_x, kept
-- while an announcement may still count x.
local nP, cP, n0, c0, n1, c1, n2, c2 = 0, 0, 0, 0, 0, 0, 0, 0
local anyN = false
do
  local record = checks and ARGV[15] + 0 ~= w + 2
  local x1, x2, x3, x4 = sf('%d', w - 1), sf('%d', w), sf('%d', w + 1), sf('%d', w + 2) -- the windows' fields
  local fv
  if record then
    fv = rcall('HMGET', fk, x1, x2, x3, x4, 'm' .. x1, 'm' .. x2, 'm' .. x3, 'm' .. x4)
  else
    fv = rcall('HMGET', fk, x1, x2, x3, x4)
  end
  if fv[1] or fv[2] or fv[3] or fv[4] then
    anyN = true
    local v = (fv[1] or 0) + 0
    nP, cP = floor(v / 4294967296), v % 4294967296
    v = (fv[2] or 0) + 0
    n0, c0 = floor(v / 4294967296), v % 4294967296
    v = (fv[3] or 0) + 0
    n1, c1 = floor(v / 4294967296), v % 4294967296
    v = (fv[4] or 0) + 0
    n2, c2 = floor(v / 4294967296), v % 4294967296
  end
  if record then
    local mp, mc = mmin(P, 2097151), mmin(c, 4294967295)
    local xs = {x1, x2, x3, x4}
    local set = {}
    for d = 0, 3 do
      local m = mp * 4294967296 + mc
      local mv = tonumber(fv[5 + d])
      if mv then
        m = mmin(floor(mv / 4294967296), mp) * 4294967296 + mmin(mv % 4294967296, mc)
      end
      if m ~= mv then
        set[#set + 1] = 'm' .. xs[1 + d]
        set[#set + 1] = string.format('%.0f', m)
      end
    end
    if #set > 0 then
      rcall('HSET', fk, unpack(set))
      rcall('HDEL', fk, sf('m%d', w - 3), sf('m%d', w - 4), sf('m%d', w - 5))
      local ttl = (w + 4) * W - now + slack -- m<w+2> is read until window w + 3 ends
      if rcall('PTTL', fk) < ttl then
        rcall('PEXPIRE', fk, ttl)
      end
    end
  end
end

-- bk[3j - 2 + k]: the key of epoch e0 + k of bucket bl[j], whose window
-- 2(e0 + k) is w + d0 + 2k, its C, G, K at o0 + 6k + 1 ..
local e0 = floor((w - 2) / 2)
local d0 = 2 * e0 - w
local o0 = 3 * (d0 + 3)
local bk = {}
local live = {} -- bk's index -> true: the hash held a field read here, so it has its expiry
for j = 1, #bl do
  local b = bl[j]
  local fl = bf[b]
  local pb = prefix .. ':b' .. b
  local nf = #fl
  local names
  if nf > 1 then
    names = {}
    for x = 1, nf do
      names[x] = fl[x][30]
    end
  end
  for k = 0, 2 do
    local key = sf('%s:e%d', pb, e0 + k)
    bk[3 * j - 2 + k] = key
    local o = o0 + 6 * k
    if nf == 1 then
      local v = rcall('HGET', key, fl[1][30])
      if v then
        live[3 * j - 2 + k] = true
        local s = fl[1]
        local a, g, kk, a1, g1, k1 = munpack(v)
        s[o + 1], s[o + 2], s[o + 3], s[o + 4], s[o + 5], s[o + 6] = a, g, kk, a1 or 0, g1 or 0, k1 or 0
      end
    else
      local vs = chunked('HMGET', key, names)
      for x = 1, nf do
        local v = vs[x]
        if v then
          live[3 * j - 2 + k] = true
          local s = fl[x]
          local a, g, kk, a1, g1, k1 = munpack(v)
          s[o + 1], s[o + 2], s[o + 3], s[o + 4], s[o + 5], s[o + 6] = a, g, kk, a1 or 0, g1 or 0, k1 or 0
        end
      end
    end
  end
end

-- headroom: the most units E, E1 and E2 all still admit (docs/budget.md),
-- E and E1 alone for a decision (dec: units counted in w weigh nothing at
-- the start of w + 2, which E2 guards against grants spent in w + 1),
-- with E counted for a decision at its instant (decElapsed). rp, rw, r1,
-- r2 are R of w - 1, w, w + 1, w + 2: the free credit PoPs may still
-- spend unseen (computed per item below), or all 0 for what was admitted
-- and granted alone.
local function headroom(s, dec, rp, rw, r1, r2)
  local cur = s[10] + s[11] + s[8] + rw
  local prev = s[7] + rp + s[5]
  local el = elapsed
  if dec then
    el = decElapsed
  end
  local est
  if prev == 0 then
    est = cur
  else
    est = cur + prev * (W - el) / W
  end
  local h = ceil(max + 1 - est) - 1
  while h > 0 and not (est < max - h + 1) do
    h = h - 1
  end
  local e1 = cur + r1
  local e2 = 0 -- E2 is of the window after next, which no unit counted in w weighs in
  if not dec then
    e2 = s[11] + r1 + r2
  end
  local m = max - e1
  if m < h then
    h = m
  end
  m = max - e2
  if m < h then
    h = m
  end
  if h < 0 then
    h = 0
  end
  return h
end

-- waitFor: the ms from the caller's send for a decision (decSent, which
-- its age may put before w: its E is then at now, decElapsed), from now
-- else, until need units fit if
-- nothing changes: the first instant of w, w + 1, w + 2 or w + 3 at
-- which E and E1 (and for a grant E2) all admit them, each window taken
-- as headroom takes w, with its own counts, grants and reservations as
-- they stand (E of w + k: C and G of w + k, G of w + k - 1 and R of
-- w + k, plus C and R of w + k - 1 and G of w + k - 2 by the weight
-- left; E1: E's first part plus R of w + k + 1; nothing counted or
-- granted in w + 3). rf is R of a window past w + 2, which no PoP has
-- claimed a slot of, as many spenders announced as for w + 2. A window's sliding
-- estimate falls to max - need as core.SlidingRetryMillis says. When
-- none of the four admits them (a request heavier than the reservations
-- leave room for: docs/budget.md, "Outside the invariant"), the next
-- window's start: they fit only once other PoPs give their slots up,
-- which nothing here can time, and a PoP gives up a window's slots at its
-- next decision Call or Sync about the identity.
local function waitFor(s, need, dec, rp, rw, r1, r2, rf)
  local el, from = elapsed, elapsed
  if dec then
    el, from = decElapsed, decSent
  end
  local lim = max - need
  local R = {rp, rw, r1, r2, rf, rf, rf} -- R of w - 1 .. w + 5
  for k = 0, 3 do
    local j = 3 * (k + 3) + 1 -- C of w + k; G at j + 1; G of w + k - 1 at j - 2
    local ck, gk = 0, 0 -- nothing is counted or granted in w + 3 yet
    if k < 3 then
      ck, gk = s[j], s[j + 1]
    end
    local cur = ck + gk + s[j - 2] + R[k + 2]
    local ok = cur <= lim and cur + R[k + 3] <= lim
    if ok and not dec then
      ok = gk + R[k + 3] + R[k + 4] <= lim
    end
    if ok then
      local prev = s[j - 3] + R[k + 1] + s[j - 5]
      local t = 0
      if prev > 0 then
        t = mmax(0, floor(W - (lim + 1 - cur) * W / prev) + 1)
      end
      if k == 0 and t < el then
        t = el
      end
      if t < W then
        return k * W + t - from
      end
    end
  end
  return W - from
end

-- hot set changes: member -> true (add) / false (remove), members in
-- order of first mention; a call of one item keeps its one in hm, hop
local hotOps, hotOrder, hm, hop
local out
if nitems == 1 then
  out = {now, w, retried, 0, through, from, 0, 0, 0, 0, 0, 0} -- no growth
else
  out = {now, w, retried, 0, through, from}
end
local q = 6
for n = 1, nitems do
  local s, a = itS[n], itArg[n]
  local nn, want, nclaims = ARGV[a + 2] + 0, ARGV[a + 3] + 0, ARGV[a + 5] + 0
  local nops = ARGV[a + 6 + nclaims] + 0
  local allowed, grant = -1, 0
  local h, retry = nil, 0
  local pk, pw = -1, 0 -- a peek's verdict and wait (n < 0)
  if retried == 0 then
    local o = a + 7 + nclaims
    for _ = 1, nops do
      local x, gwa, u = ARGV[o] + 0, ARGV[o + 1] + 0, ARGV[o + 2] + 0
      o = o + 3
      local gw = gwa - w
      if gwa == -3 then
        for d = -3, 3 do
          local j = 3 * (d + 3) + 1
          if s[j] ~= 0 then
            s[j] = 0
            s[25 + d] = true
          end
        end
      elseif gwa >= 0 and gw >= -2 and gw <= 0 then
        local j = 3 * (gw + 3) + 2
        local v = s[j] - u
        if v > 0 then
          s[j] = v
        else
          s[j] = 0
        end
        s[25 + gw] = true
      end
      if x >= 0 then
        local d = x - w
        if d > 0 then
          d = 0
        end
        if d >= -1 then
          local j = 3 * (d + 3) + 1
          s[j] = s[j] + u
          if gwa == -1 and x <= w then
            -- a free op of a later window (a request stamped ahead of
            -- this call's clock) counts its units here but claims no slot
            -- of w: its own window's slot stays reserved
            s[j + 2] = s[j + 2] + 1
          end
          s[25 + d] = true
        end
      end
    end
    for j = a + 6, a + 5 + nclaims do
      local d = ARGV[j] - w
      if d >= -1 and d <= 2 then
        local k = 3 * (d + 3) + 3
        s[k] = s[k] + 1
        s[25 + d] = true
      end
    end
  end
  -- R of w - 1 .. w + 2: the larger of c * max(0, P - K) and the
  -- announced spenders' (above)
  local rp, rw, r1, r2, rf = 0, 0, 0, 0, c * P -- rf: R of a later window none has claimed
  do
    local kp, k0, k1, k2 = s[9], s[12], s[15], s[18]
    local t = P - kp
    if t > 0 then rp = c * t end
    t = P - k0
    if t > 0 then rw = c * t end
    t = P - k1
    if t > 0 then r1 = c * t end
    t = P - k2
    if t > 0 then r2 = c * t end
    if anyN then
      t = nP - kp
      if t > 0 and cP * t > rp then rp = cP * t end
      t = n0 - k0
      if t > 0 and c0 * t > rw then rw = c0 * t end
      t = n1 - k1
      if t > 0 and c1 * t > r1 then r1 = c1 * t end
      t = n2 - k2
      if t > 0 and c2 * t > r2 then r2 = c2 * t end
      if c2 * n2 > rf then rf = c2 * n2 end
    end
  end
  if retried == 0 then
    if nn > 0 then
      if nn <= headroom(s, true, rp, rw, r1, r2) then
        allowed = 1
        s[10] = s[10] + nn
        s[25] = true
      else
        allowed, retry = 0, waitFor(s, nn, true, rp, rw, r1, r2, rf)
      end
    elseif nn < 0 then
      -- a peek of -nn units: would a decision of them be admitted now,
      -- and if not, the ms until they would fit; nothing is counted
      if -nn <= headroom(s, true, rp, rw, r1, r2) then
        pk = 1
      else
        pk, pw = 0, waitFor(s, -nn, true, rp, rw, r1, r2, rf)
      end
    end
    if want > 0 then
      h = headroom(s, false, rp, rw, r1, r2)
      -- a quarter of an equal share of the headroom per ask, and none
      -- below gmin: budget held where no request comes is what denies a
      -- request elsewhere, so the last units stay at Redis to be decided
      -- where the requests are; a caller's own divisor (g <= 0) is a PoP
      -- that served more of the demand, or owns the identity (1: its
      -- want, up to the headroom)
      local gmin, dv = ARGV[a + 4] + 0, 4 * P
      if gmin <= 0 then
        dv = -gmin
        if dv < 1 then
          dv = 1
        end
        gmin = 1
      end
      if h >= dv * want then
        grant = want
      elseif h >= gmin then
        grant = mmin(want, ceil(h / dv))
      end
      if grant > 0 then
        s[11] = s[11] + grant
        s[25] = true
        h = nil
      end
    end
  end
  if allowed == 0 then
    if grant > 0 then
      -- the grant after the denial weighs in the wait
      retry = waitFor(s, nn, true, rp, rw, r1, r2, rf)
    end
    if not h then
      h = headroom(s, false, rp, rw, r1, r2)
    end
  else
    if not h then
      h = headroom(s, false, rp, rw, r1, r2)
    end
    if h < 1 then
      retry = waitFor(s, 1, false, rp, rw, r1, r2, rf)
    end
  end
  if pk >= 0 then
    allowed, grant = pk, pw -- a peek is granted nothing: its wait goes in the grant's place
  end
  out[q + 1], out[q + 2], out[q + 3], out[q + 4], out[q + 5], out[q + 6] = allowed, grant, s[10], s[7], h, retry
  q = q + 6
  if retried == 0 and (nn > 0 or want > 0 or nclaims > 0 or nops > 0) then
    local op
    if (rw > 0 or r1 > 0) and (h < max / 4 or headroom(s, false, 0, 0, 0, 0) < max * 2 / 3) then
      op = true
    elseif rw == 0 and r1 == 0 then
      op = false
    end
    if op ~= nil then
      local m = s[29]
      if nitems == 1 then
        hm, hop = m, op
      else
        if not hotOps then
          hotOps, hotOrder = {}, {}
        end
        if hotOps[m] == nil then
          hotOrder[#hotOrder + 1] = m
        end
        hotOps[m] = op
      end
    end
  end
end

for j = 1, #bl do
  local fl = bf[bl[j]]
  local nf = #fl
  for k = 0, 2 do
    local d = d0 + 2 * k -- window 2(e0 + k) is w + d
    local o = o0 + 6 * k
    local args, na = nil, 0
    for x = 1, nf do
      local s = fl[x]
      if s[25 + d] or s[26 + d] then
        if not args then
          args = {}
        end
        args[na + 1] = s[30]
        if s[o + 4] == 0 and s[o + 5] == 0 and s[o + 6] == 0 then
          args[na + 2] = mpack(s[o + 1], s[o + 2], s[o + 3])
        else
          args[na + 2] = mpack(s[o + 1], s[o + 2], s[o + 3], s[o + 4], s[o + 5], s[o + 6])
        end
        na = na + 2
      end
    end
    if args then
      local key = bk[3 * j - 2 + k]
      chunked('HSET', key, args)
      if not live[3 * j - 2 + k] then
        rcall('PEXPIRE', key, sf('%d', (2 * (e0 + k) + 4) * W - now + slack))
      end
    end
  end
end

local cursor = 0
if hotWin == w then
  cursor = ARGV[11] + 0
end
if hm or hotOrder or batch then
  local hk = sf('%s:hz:%d', prefix, w)
  local added = false
  if hm then
    if not hop then
      rcall('ZREM', hk, hm)
    elseif not rcall('ZSCORE', hk, hm) then
      rcall('ZADD', hk, rcall('INCR', hk .. ':n'), hm)
      added = true
    end
  elseif hotOrder then
    local rem = {}
    for j = 1, #hotOrder do
      local m = hotOrder[j]
      if not hotOps[m] then
        rem[#rem + 1] = m
      elseif not rcall('ZSCORE', hk, m) then
        rcall('ZADD', hk, rcall('INCR', hk .. ':n'), m)
        added = true
      end
    end
    if #rem > 0 then
      chunked('ZREM', hk, rem)
    end
  end
  if added then
    local ttl = sf('%d', 2 * W + slack)
    rcall('PEXPIRE', hk, ttl)
    rcall('PEXPIRE', hk .. ':n', ttl)
  end
  if batch then
    -- without scores: each would be formatted as a double
    local hot = rcall('ZRANGEBYSCORE', hk, sf('(%d', cursor), '+inf', 'LIMIT', '0', '256')
    local nh = #hot
    if nh > 0 then
      for x = 1, nh do
        q = q + 1
        out[q] = hot[x]
      end
      cursor = tonumber(rcall('ZSCORE', hk, hot[nh]))
    end
  end
end
out[4] = cursor
return out
