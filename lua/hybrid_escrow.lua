-- edgelimit hybrid escrow: hybrid_reconcile.lua for a batch of identities
-- (merge this PoP's cumulative counts of two windows by maximum, read every
-- PoP's fields back), plus escrowed allowances: for each identity a hash
-- holds every PoP's outstanding allowance, the units it may admit without
-- asking, as "units:expiry_ms". The units this call reports as new (the
-- field's growth) leave the caller's allowance, expired allowances are
-- dropped (one lease after their expiry), and the caller is granted up to `want` more units of what the
-- limit leaves once the global sliding estimate and every outstanding
-- allowance are counted, by the article's rule (a unit passes while the
-- estimate is below max, as in hybrid_decide.lua and core.SlidingAdmits):
--   estimate + sum(allowances) < max + 1
-- holds after every call: each unit of every allowance, admitted one
-- after the other now, would pass that rule. The estimate never grows
-- without an admission (the previous window's weight only decays), so
-- what this holds at one instant holds at every later one. (Until
-- 2026-12-03 the room was floored, granting up to one unit less than the
-- rule leaves: an identity at its limit then settled a unit below it.)
--
-- Sole holders. A caller that asks (want ~= 0) while no other PoP holds a
-- record in the allowance hash and no other PoP has a count in either
-- window becomes the identity's owner, "0:expiry:o": it may admit any unit
-- its own view admits by the article's rule, because while its record
-- stands no other PoP is granted anything, so its view's count of the
-- others is what Redis holds and its own count is exact; its admissions
-- keep the estimate below max + 1 exactly as pure Redis' decisions would.
-- Every Sync of the owner renews it, unless another PoP's record asked
-- within the lease: the owner's record then becomes "0:expiry:r"
-- (released). A released record still keeps the others out, because the
-- owner goes on admitting as owner until this reply reaches it; its first
-- Sync read after that reply (it says so: the item's last argument)
-- reports those units and turns the record into a plain one, and only
-- then does the limit's room go to anyone. A batch read while the caller
-- still believed it owned (the release's reply lost, or two Syncs in
-- flight) leaves the record released. A PoP that asks while
-- another owns or releases gets nothing but a record "0:expiry" that says
-- it asked. A crashed owner's record keeps the others out until one lease
-- past its expiry: denials, never admissions.
--
-- KEYS[3i-2], KEYS[3i-1], KEYS[3i]: item i's hashes of its window, of the
-- window before, and of its allowances.
-- ARGV[1] id, ARGV[2] PEXPIRE ms, ARGV[3] now ms (the caller's clock),
-- ARGV[4] elapsed ms in the window, ARGV[5] window ms, ARGV[6] max,
-- ARGV[7] lease ms (how long a grant lasts unless renewed), then per item
-- ARGV[8+4(i-1)..]: own current, own previous, want (units; -1 asks
-- for ownership alone, no units: hybrid.Config.Owners), and "1" if the
-- caller believed it owned the identity when it read the batch, else "0".
-- Reply per item: prior cur, HGETALL cur, prior prev, HGETALL prev,
-- allowance (units), its expiry (ms; 0 with no units unless owner), 1 if the
-- caller owns the identity else 0; then Redis' clock (TIME) in ms.
-- The estimate uses the same float operation order as core.SlidingEstimate.
--
-- Redis CPU: each window hash is read once, by HGETALL, into its flat
-- {field, value, ...} array; a merge that raises the caller's field writes
-- it (one HSET, one PEXPIRE) and updates the array in place (a changed
-- field keeps its place, a new one is appended: what a small hash, a
-- listpack, does); the totals and the reply come from that array: HGETALL
-- after the write. A written hash of more than 128 fields or with a string
-- over 64 bytes is read back instead: past hash-max-listpack-entries or
-- -value (assumed at least that, Redis' defaults) Redis keeps a hash
-- table, whose order is its own. A count equal to the stored string is not
-- parsed, and `s + 0` converts exactly as tonumber(s) does (both are Lua's
-- luaO_str2d) for half the cost. An HDEL of a grant not there is skipped.
local id, ttl = ARGV[1], ARGV[2]
local now, elapsed, w, max, lease = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])

-- small reports whether a's hash is a listpack (see above).
local function small(a)
  if #a > 256 then return false end
  for j = 1, #a do
    if #a[j] > 64 then return false end
  end
  return true
end

-- merge reads hash k once (HGETALL) and max-merges count v (ARGV string s,
-- its number v) into field id, writing it at once. It returns the field's
-- count before and the hash after: HGETALL's array, updated in place.
local function merge(k, s, v)
  local a = redis.call('HGETALL', k)
  local j, old
  for x = 1, #a, 2 do
    if a[x] == id then
      j, old = x, a[x + 1]
      break
    end
  end
  if old == s then return old + 0, a end
  old = (old or 0) + 0
  if v > old then
    redis.call('HSET', k, id, v)
    redis.call('PEXPIRE', k, ttl)
    if not j then
      j = #a + 1
      a[j] = id
    end
    -- Redis printed the number v: the digits of %d for a positive integer
    -- below 10^15.
    a[j + 1] = string.format('%d', v)
    if v ~= math.floor(v) or v <= 0 or v >= 1e15 or not small(a) then a = redis.call('HGETALL', k) end
  end
  return old, a
end

local function total(a)
  local s = 0
  for j = 2, #a, 2 do s = s + a[j] end
  return s
end

-- alone reports whether id holds every count of hash array a.
local function alone(a)
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
  local pc, ac = merge(kc, ARGV[a], oc)
  local pp, ap = merge(kp, ARGV[a + 1], op)
  local spent = math.max(oc - pc, 0) + math.max(op - pp, 0)
  local mine, others, held, flag = 0, 0, false, ''
  local blocked, asked, anyOther = false, false, false
  local g = redis.call('HGETALL', kg)
  for j = 1, #g, 2 do
    local units, exp, f = string.match(g[j + 1], '^(%d+):(%d+):?([or]?)$')
    units, exp = tonumber(units), tonumber(exp)
    -- A grant is spent only until its expiry; Redis keeps counting it for
    -- one more lease, so units spent just before the expiry are reported
    -- (by the PoP's next Sync) before the headroom can be granted again.
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
    -- The owner renews its record, or releases it when another PoP's
    -- record is unexpired (it asked): 'r' keeps the others out until a
    -- Sync of the owner read after this reply reached it.
    mine, flag = 0, asked and 'r' or 'o'
  elseif flag == 'r' and believes then
    -- The caller read this batch while it still believed it owned the
    -- identity (the reply that released it was lost, or this Sync
    -- overlapped the one that released it): it may be admitting as owner
    -- now. The record stays released, unrenewed, until a batch read after
    -- a reply that said "not owner".
    mine, exp = 0, myexp
  elseif blocked then
    -- Another PoP owns the identity, or is releasing it: no grant, but a
    -- record that it asked.
    flag = ''
  elseif want ~= 0 and not anyOther and alone(ac) and alone(ap) then
    mine, flag = 0, 'o'
  else
    flag = ''
    local est = total(ac) + total(ap) * (w - elapsed) / w
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
  out[#out + 1] = ac
  out[#out + 1] = pp
  out[#out + 1] = ap
  out[#out + 1] = mine
  out[#out + 1] = exp
  out[#out + 1] = flag == 'o' and 1 or 0
end
local t = redis.call('TIME')
out[#out + 1] = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return out
