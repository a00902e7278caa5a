-- budget.lua: the budget limiter's Redis side (package sync/budget, see
-- docs/budget.md). One call applies a batch of items of one group (one hash
-- tag): each item's report (spends, returns, free-slot claims), then its
-- decision of n units at Redis (n > 0), then its grant (want > 0). The
-- estimate repeats core.SlidingEstimate / core.SlidingAdmits exactly.
--
-- KEYS[1]: the retry guard of (incarnation, group), '{tag}:seq:<inc>'; it
--          names the group's slot (every key the script touches is
--          '<prefix>:b<bucket>:<window>' with the same hash tag).
-- ARGV[1]  now, ms (ignored when ARGV[2] is '1': read from TIME)
-- ARGV[2]  1 to read now from the server
-- ARGV[3]  window, ms          ARGV[4] max, units per window
-- ARGV[5]  P, the PoPs         ARGV[6] c, free credit per PoP and window
-- ARGV[7]  slack, ms added to every expiry
-- ARGV[8]  prefix '{tag}'      ARGV[9] seq (0: no guard, a decision call)
-- ARGV[10] hot cursor's window ARGV[11] hot cursor
-- ARGV[12] the caller's incarnation  ARGV[13] announce-through (0: none)
-- ARGV[14] item count  ARGV[15] checks recorded through (ignored: this
-- script records every check)  ARGV[16] age: a decision's E at now -
-- age when that is within w, else at now; its retry counted from now -
-- age either way  ARGV[17] on, per item:
--   field, bucket, n, want, g, nclaims, claim windows..., nops,
--   (x, gw, u)...; g >= 1: a grant is want when the headroom h >= 4P *
--   want, else min(want, ceil(h / 4P)) while h >= g; g <= 0: the same
--   with the divisor d = max(1, -g) in place of 4P, while h >= 1 (d = 1:
--   an owned identity, its want up to the headroom)
--   op: gw >= 0 takes u from G_gw; x >= 0 adds u to C_x (x = -1: a return);
--   gw = -1 is the PoP's free credit of window x, which also claims its
--   slot (K_x + 1); gw = -2 is a fallback admission (C_x only).
-- Returns {now, w, retried, hot cursor, leased through, leased from, then per item: allowed (-1 none, 0, 1), grant,
-- C_w, C_{w-1}, headroom, retry}: retry is, when headroom is 0, the ms
-- until one unit would fit if nothing changed (core.SlidingRetryMillis
-- on E's counts, or the next window when E1 or E2 binds), else 0. A batch
-- (seq > 0) then lists the group's hot identities of window w as
-- 'bucket|field' strings: those Redis last saw with under a quarter of the
-- limit left and free slots of w or w+1 unclaimed, so every PoP gives up
-- its slots of them (kept in the sorted set '<prefix>:hz:<w>', scored by
-- the order each became hot in; at most 256 after the cursor, with the
-- new cursor, as lua/budget.lua).

local now = tonumber(ARGV[1])
if ARGV[2] == '1' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local W = tonumber(ARGV[3])
local max = tonumber(ARGV[4])
local P = tonumber(ARGV[5])
local c = tonumber(ARGV[6])
local slack = tonumber(ARGV[7])
local prefix = ARGV[8]
local seq = tonumber(ARGV[9])
local nitems = tonumber(ARGV[14])

local w = math.floor(now / W)
local elapsed = now - w * W

local retried = 0
if seq > 0 and tonumber(ARGV[10]) >= 0 then
  -- a batch: one in flight per group, so a high-water mark
  local last = tonumber(redis.call('GET', KEYS[1]) or '0')
  if seq <= last then
    retried = 1
  else
    redis.call('SET', KEYS[1], seq, 'PX', 4 * W + slack)
  end
elseif seq > 0 then
  -- a decision's report (or a Reset): up to 32 outstanding, in any
  -- order, so an anti-replay window: the highest number applied and a
  -- mask of the 32 numbers up to it (bit d: number hw - d applied); a
  -- number below the window is refused as applied
  local hw, mask = 0, 0
  local v = redis.call('GET', KEYS[1])
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
    redis.call('SET', KEYS[1], string.format('%.0f:%.0f', hw, mask), 'PX', 4 * W + slack)
  end
end

local touched = {}

local function key(b, x)
  return prefix .. ':b' .. b .. ':' .. x
end

local function load(b, f, x)
  local v = redis.call('HGET', key(b, x), f)
  if not v then
    return {0, 0, 0}
  end
  local a, g, k = string.match(v, '^(%d+):(%d+):(%d+)$')
  return {tonumber(a), tonumber(g), tonumber(k)}
end

local function store(b, f, x, s)
  local k = key(b, x)
  redis.call('HSET', k, f, string.format('%d:%d:%d', s[1], s[2], s[3]))
  if not touched[k] then
    touched[k] = true
    redis.call('PEXPIRE', k, (x + 3) * W - now + slack)
  end
end

-- who may spend free credit (see lua/budget.lua): announcements counted per
-- window, each incarnation once; the least PoPs and credit of the callers
-- whose decisions or grants read R_x ('mp<x>', 'mc<x>'); an announcement
-- of a window read by a check that reserved less than it needs moves the
-- lease's first window (from) past it
local through, from = -1, -1
local fk = prefix .. ':fc'
local ann = tonumber(ARGV[13])
if ann > 0 and c > 0 then
  local ik = prefix .. ':fa:' .. ARGV[12]
  local have = -1
  local hv = redis.call('GET', ik)
  if hv then
    local a, b = string.match(hv, '^(-?%d+):(-?%d+)$')
    have, from = tonumber(a), tonumber(b)
  end
  if ann > have and ann >= w - 1 then
    if have < w - 1 then
      from = math.max(have + 1, w - 1)
    end
    for x = math.max(have + 1, w - 1), ann do
      local n = tonumber(redis.call('HGET', fk, 'n' .. x) or '0')
      local cx = tonumber(redis.call('HGET', fk, 'c' .. x) or '0')
      local mp = redis.call('HGET', fk, 'mp' .. x)
      if mp and (n + 1 > tonumber(mp) or math.max(cx, c) > tonumber(redis.call('HGET', fk, 'mc' .. x))) then
        from = math.max(from, x + 1)
      end
      redis.call('HINCRBY', fk, 'n' .. x, 1)
      if cx < c then
        redis.call('HSET', fk, 'c' .. x, c)
      end
    end
    for d = 3, 5 do
      redis.call('HDEL', fk, 'n' .. (w - d), 'c' .. (w - d), 'mp' .. (w - d), 'mc' .. (w - d))
    end
    local ttl = (ann + 2) * W - now + slack
    redis.call('SET', ik, ann .. ':' .. from, 'PX', ttl)
    if redis.call('PTTL', fk) < ttl then
      redis.call('PEXPIRE', fk, ttl)
    end
    have = ann
  end
  through = have
end
local checks = false
do
  local j = 17
  for _ = 1, nitems do
    checks = checks or tonumber(ARGV[j + 2]) > 0 or tonumber(ARGV[j + 3]) > 0
    j = j + 6 + tonumber(ARGV[j + 5])
    j = j + 1 + 3 * tonumber(ARGV[j])
  end
end
if checks then
  for x = w - 1, w + 2 do
    local mp, mc = redis.call('HGET', fk, 'mp' .. x), redis.call('HGET', fk, 'mc' .. x)
    if not mp or tonumber(mp) > P then
      redis.call('HSET', fk, 'mp' .. x, P)
    end
    if not mc or tonumber(mc) > c then
      redis.call('HSET', fk, 'mc' .. x, c)
    end
  end
  for d = 3, 5 do
    redis.call('HDEL', fk, 'mp' .. (w - d), 'mc' .. (w - d))
  end
  local ttl = (w + 4) * W - now + slack
  if redis.call('PTTL', fk) < ttl then
    redis.call('PEXPIRE', fk, ttl)
  end
end
local function spenders(d)
  return tonumber(redis.call('HGET', fk, 'n' .. (w + d)) or '0'), tonumber(redis.call('HGET', fk, 'c' .. (w + d)) or '0')
end

local unreserved = false -- headroom leaves R out (what was admitted and granted alone)

local function R(s, d)
  if unreserved then
    return 0
  end
  local n, cx = spenders(d)
  return math.max(c * math.max(0, P - s[3]), cx * math.max(0, n - s[3]))
end

-- headroom: the most units E, E1 and E2 all still admit (docs/budget.md),
-- and, when that is under need, the ms until need units fit if nothing
-- changes.
local function headroom(s, need, dec)
  local cw, p1, p2, n1, n2 = s[0], s[-1], s[-2], s[1], s[2]
  local cur = cw[1] + cw[2] + p1[2] + R(cw, 0)
  local prev = p1[1] + R(p1, -1) + p2[2]
  local at, from = elapsed, elapsed -- E's instant; the caller's send, the wait's start
  local age = tonumber(ARGV[16])
  if dec and age > 0 and age <= elapsed then
    at = elapsed - age
  end
  if dec then
    from = elapsed - age
  end
  local est
  if prev == 0 then
    est = cur
  else
    est = cur + prev * (W - at) / W
  end
  local h = math.ceil(max + 1 - est) - 1
  while h > 0 and not (est < max - h + 1) do
    h = h - 1
  end
  local e1 = cw[1] + cw[2] + p1[2] + R(cw, 0) + R(n1, 1)
  local e2 = cw[2] + R(n1, 1) + R(n2, 2)
  if dec then
    e2 = 0
  end
  h = math.max(0, math.min(h, max - e1, max - e2))
  if h >= need then
    return h, 0
  end
  -- the wait: the first instant of w, w + 1, w + 2 or w + 3 (else the
  -- start of w + 1) at which E, E1 and (for a grant) E2 of
  -- that window, as the counts, grants and reservations stand, admit
  -- need units; R of a window past w + 2 is c * P or what w + 2's
  -- spenders announced, whichever is more; nothing counted or granted in
  -- w + 3
  local zero = {0, 0, 0}
  local function st(d)
    if d > 2 then
      return zero
    end
    return s[d]
  end
  local function Rx(d)
    if d <= 2 then
      return R(st(d), d)
    end
    local n, cx = spenders(2)
    return math.max(c * P, cx * n)
  end
  for k = 0, 3 do
    local ck, pk, pk2 = st(k), st(k - 1), st(k - 2)
    local curk = ck[1] + ck[2] + pk[2] + Rx(k)
    local prevk = pk[1] + Rx(k - 1) + pk2[2]
    local fits = curk <= max - need and curk + Rx(k + 1) <= max - need
    if not dec then
      fits = fits and ck[2] + Rx(k + 1) + Rx(k + 2) <= max - need
    end
    if fits then
      local t = 0
      if prevk > 0 then
        -- the first ms at which curk + prevk * (W - t) / W < max - need + 1
        t = math.max(0, math.floor(W - (max - need + 1 - curk) * W / prevk) + 1)
      end
      if k == 0 then
        t = math.max(t, at)
      end
      if t < W then
        return h, k * W + t - from
      end
    end
  end
  return h, W - from
end

local out = {now, w, retried, 0, through, from}
local hotOps, hotOrder = {}, {}
local i = 17
for _ = 1, nitems do
  local f = ARGV[i]
  local b = ARGV[i + 1]
  local n = tonumber(ARGV[i + 2])
  local want = tonumber(ARGV[i + 3])
  local gmin = tonumber(ARGV[i + 4])
  local div = 4 * P
  if gmin <= 0 then
    div, gmin = math.max(1, -gmin), 1
  end
  local nclaims = tonumber(ARGV[i + 5])
  i = i + 6
  local s = {}
  for d = -2, 2 do
    s[d] = load(b, f, w + d)
  end
  local dirty = {}
  local claims = {}
  for j = 0, nclaims - 1 do
    claims[#claims + 1] = tonumber(ARGV[i + j])
  end
  i = i + nclaims
  local nops = tonumber(ARGV[i])
  i = i + 1
  local ops = {}
  for j = 0, nops - 1 do
    ops[#ops + 1] = {tonumber(ARGV[i + 3 * j]), tonumber(ARGV[i + 3 * j + 1]), tonumber(ARGV[i + 3 * j + 2])}
  end
  i = i + 3 * nops
  local allowed, grant = -1, 0
  if retried == 0 then
    for _, op in ipairs(ops) do
      local x, gw, u = op[1], op[2] - w, op[3]
      if op[2] == -3 then
        for d = -2, 2 do
          if s[d][1] ~= 0 then
            s[d][1] = 0
            dirty[d] = true
          end
        end
      elseif op[2] >= 0 and gw >= -2 and gw <= 0 then
        s[gw][2] = math.max(0, s[gw][2] - u)
        dirty[gw] = true
      end
      if x >= 0 then
        local d = math.min(x - w, 0)
        if d >= -1 then
          s[d][1] = s[d][1] + u
          if op[2] == -1 and x <= w then
            s[d][3] = s[d][3] + 1
          end
          dirty[d] = true
        end
      end
    end
    for _, x in ipairs(claims) do
      local d = x - w
      if d >= -1 and d <= 2 then
        s[d][3] = s[d][3] + 1
        dirty[d] = true
      end
    end
    if n > 0 then
      if n <= headroom(s, 1, true) then
        allowed = 1
        s[0][1] = s[0][1] + n
        dirty[0] = true
      else
        allowed = 0
      end
    end
    if want > 0 then
      local h = headroom(s, 1)
      if h >= div * want then
        grant = want
      elseif h >= gmin then
        grant = math.min(want, math.ceil(h / div))
      end
      if grant > 0 then
        s[0][2] = s[0][2] + grant
        dirty[0] = true
      end
    end
    for d = -2, 2 do
      if dirty[d] then
        store(b, f, w + d, s[d])
      end
    end
  end
  out[#out + 1] = allowed
  out[#out + 1] = grant
  out[#out + 1] = s[0][1]
  out[#out + 1] = s[-1][1]
  local h, retry
  if allowed == 0 then
    local _
    _, retry = headroom(s, n, true)
    h = headroom(s, 1)
  else
    h, retry = headroom(s, 1)
  end
  out[#out + 1] = h
  out[#out + 1] = retry
  if retried == 0 and (n > 0 or want > 0 or nclaims > 0 or nops > 0) then
    local m, op = b .. '|' .. f, nil
    local busy = false
    if R(s[0], 0) > 0 or R(s[1], 1) > 0 then
      unreserved = true
      busy = headroom(s, 1) < max * 2 / 3
      unreserved = false
    end
    if (h < max / 4 or busy) and (R(s[0], 0) > 0 or R(s[1], 1) > 0) then
      op = true
    elseif R(s[0], 0) == 0 and R(s[1], 1) == 0 then
      op = false
    end
    if op ~= nil then
      if hotOps[m] == nil then
        hotOrder[#hotOrder + 1] = m
      end
      hotOps[m] = op
    end
  end
end
local hk = prefix .. ':hz:' .. w
for _, m in ipairs(hotOrder) do
  if not hotOps[m] then
    redis.call('ZREM', hk, m)
  elseif not redis.call('ZSCORE', hk, m) then
    redis.call('ZADD', hk, redis.call('INCR', hk .. ':n'), m)
    redis.call('PEXPIRE', hk, 2 * W + slack)
    redis.call('PEXPIRE', hk .. ':n', 2 * W + slack)
  end
end
local cursor = 0
if tonumber(ARGV[10]) == w then
  cursor = tonumber(ARGV[11])
end
if seq > 0 and tonumber(ARGV[10]) >= 0 then
  local hot = redis.call('ZRANGEBYSCORE', hk, '(' .. cursor, '+inf', 'WITHSCORES', 'LIMIT', 0, 256)
  for j = 1, #hot, 2 do
    out[#out + 1] = hot[j]
    cursor = tonumber(hot[j + 1])
  end
end
out[4] = cursor
return out
