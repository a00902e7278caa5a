-- edgelimit hybrid decide: merge the caller's view of one identity (its own
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
-- With a third key, the identity's allowance hash (see hybrid_escrow.lua),
-- ARGV[10] is now ms (the caller's clock) and ARGV[11] the lease ms, and
-- the peers' triples start at ARGV[12]: the units other PoPs hold as
-- allowances leave that much less room, and while another PoP owns the
-- identity (or releases it) nothing is admitted here and the caller's
-- record "0:expiry" says it asked, so the owner's next Sync releases it.
-- Reply: {allowed 0|1, own prior cur, HGETALL cur, own prior prev, HGETALL prev}
-- The estimate uses the same float operation order as core.SlidingEstimate.
--
-- Redis CPU: each hash is read once, by HGETALL, into its flat {field,
-- value, ...} array. The merges are made in that array (a changed field
-- keeps its place, a new one is appended: what a small hash, a listpack,
-- does), the changes are written with one HSET and one PEXPIRE per hash,
-- and the array is the reply: HGETALL after the writes. A written hash of
-- more than 128 fields or with a string over 64 bytes is read back instead:
-- past hash-max-listpack-entries or -value (assumed at least that, Redis'
-- defaults) Redis keeps a hash table, whose order is its own. A count
-- equal to the stored string is not parsed, and `s + 0` converts exactly
-- as tonumber(s) does (both are Lua's luaO_str2d) for half the cost.
local id, ttl = ARGV[1], ARGV[2]
local n, elapsed, w, max = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])

-- find returns the index of field f in flat array a, or nil.
local function find(a, f)
  for j = 1, #a, 2 do
    if a[j] == f then return j end
  end
end

-- merge max-merges count v (a string) into field f of a. It returns f's
-- count before and the index of f when it changed.
local function merge(a, f, v)
  local j = find(a, f)
  if j then
    local s = a[j + 1]
    if s == v then return s + 0 end
    local old = s + 0
    if v + 0 > old then
      a[j + 1] = v
      return old, j
    end
    return old
  end
  if v + 0 > 0 then
    j = #a + 1
    a[j], a[j + 1] = f, v
    return 0, j
  end
  return 0
end

local function total(a)
  local s = 0
  for j = 2, #a, 2 do s = s + a[j] end
  return s
end

-- small reports whether a's hash is a listpack (see above).
local function small(a)
  if #a > 256 then return false end
  for j = 1, #a do
    if #a[j] > 64 then return false end
  end
  return true
end

-- write sends the fields of a at indexes js to hash k, one HSET (per 1000
-- fields), and renews its TTL.
local function write(k, a, js)
  for s = 1, #js, 1000 do
    local args = {}
    for i = s, math.min(s + 999, #js) do
      args[#args + 1] = a[js[i]]
      args[#args + 1] = a[js[i] + 1]
    end
    redis.call('HSET', k, unpack(args))
  end
  redis.call('PEXPIRE', k, ttl)
end

-- held weighs the allowance hash KEYS[3] (see above): the units other
-- PoPs hold, and whether another PoP owns the identity (then recording
-- that the caller asked).
local function held()
  local now, lease = tonumber(ARGV[10]), tonumber(ARGV[11])
  local g = redis.call('HGETALL', KEYS[3])
  local others, owned, mine = 0, false, nil
  for j = 1, #g, 2 do
    local units, exp, f = string.match(g[j + 1], '^(%d+):(%d+):?([or]?)$')
    units, exp = tonumber(units), tonumber(exp)
    if units and exp and exp + lease > now then
      if g[j] == id then
        mine = g[j + 1]
      else
        others, owned = others + units, owned or f ~= ''
      end
    end
  end
  if owned and (not mine or string.match(mine, '^0:%d+$')) then
    redis.call('HSET', KEYS[3], id, '0:' .. (now + lease))
    redis.call('PEXPIRE', KEYS[3], ttl)
  end
  return others, owned
end

local first, others, owned = 10, 0, false
if #KEYS == 3 then
  first = 12
  others, owned = held()
end

local cur = redis.call('HGETALL', KEYS[1])
local prev = cur
if KEYS[2] ~= KEYS[1] then prev = redis.call('HGETALL', KEYS[2]) end
local pc, jc = merge(cur, id, ARGV[7])
local pp, jp = merge(prev, id, ARGV[8])
-- indexes of the fields changed, per hash
local wc, wp = jc and {jc}, jp and {jp}
local ec, ep = 0, 0
if ARGV[9] == '1' then
  for i = first, #ARGV, 3 do
    local _, j = merge(cur, ARGV[i], ARGV[i + 1])
    if j then
      wc = wc or {}
      wc[#wc + 1] = j
    end
    _, j = merge(prev, ARGV[i], ARGV[i + 2])
    if j then
      wp = wp or {}
      wp[#wp + 1] = j
    end
  end
else
  -- A peer's count adds what it has above the stored one. (Inlined, the
  -- hot path: sync/hybrid always sends "0".)
  for i = first, #ARGV, 3 do
    local f, s = ARGV[i], nil
    for j = 1, #cur, 2 do
      if cur[j] == f then
        s = cur[j + 1]
        break
      end
    end
    local v = ARGV[i + 1]
    if s ~= v then
      v = v + 0
      local old = (s or 0) + 0
      if v > old then ec = ec + (v - old) end
    end
    s = nil
    for j = 1, #prev, 2 do
      if prev[j] == f then
        s = prev[j + 1]
        break
      end
    end
    v = ARGV[i + 2]
    if s ~= v then
      v = v + 0
      local old = (s or 0) + 0
      if v > old then ep = ep + (v - old) end
    end
  end
end
local c, p = total(cur) + ec, total(prev) + ep
local est = c + p * (w - elapsed) / w
if wc then write(KEYS[1], cur, wc) end
if wp then write(KEYS[2], prev, wp) end
local allowed, exact = 0, true
if not owned and est + others < max - n + 1 then
  local r = redis.call('HINCRBY', KEYS[1], id, n)
  if not wc then redis.call('PEXPIRE', KEYS[1], ttl) end
  local j = find(cur, id)
  if not j then
    j = #cur + 1
    cur[j] = id
  end
  -- HINCRBY's integer as Redis prints it (a double holds it below 2^53).
  cur[j + 1] = string.format('%d', r)
  exact = r < 2 ^ 53 and r > -2 ^ 53
  allowed = 1
end
if (wc or allowed == 1) and not (exact and small(cur)) then cur = redis.call('HGETALL', KEYS[1]) end
if KEYS[2] == KEYS[1] then
  prev = cur
elseif wp and not small(prev) then
  prev = redis.call('HGETALL', KEYS[2])
end
return {allowed, pc, cur, pp, prev}
