-- edgelimit hybrid escrow: hybrid_reconcile.lua for a batch of identities
-- (merge this PoP's cumulative counts of two windows by maximum, read every
-- PoP's fields back), plus escrowed allowances: for each identity a hash
-- holds every PoP's outstanding allowance, the units it may admit without
-- asking, as "units:expiry_ms". The units this call reports as new (the
-- field's growth) leave the caller's allowance, expired allowances are
-- dropped (one lease after their expiry), and the caller is granted up to `want` more units of what the
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
-- ARGV[8+3(i-1)..]: own current, own previous, want.
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

local out = {}
for i = 1, #KEYS / 3 do
  local kc, kp, kg = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local a = 8 + 3 * (i - 1)
  local oc, op, want = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local pc, pp = merge(kc, oc), merge(kp, op)
  local spent = math.max(oc - pc, 0) + math.max(op - pp, 0)
  local mine, others = 0, 0
  local g = redis.call('HGETALL', kg)
  for j = 1, #g, 2 do
    local units, exp = string.match(g[j + 1], '^(%d+):(%d+)$')
    units, exp = tonumber(units), tonumber(exp)
    -- A grant is spent only until its expiry; Redis keeps counting it for
    -- one more lease, so units spent just before the expiry are reported
    -- (by the PoP's next Sync) before the headroom can be granted again.
    if not units or not exp or exp + lease <= now then
      redis.call('HDEL', kg, g[j])
    elseif g[j] == id then
      mine = units
    else
      others = others + units
    end
  end
  mine = math.max(mine - spent, 0)
  local est = total(kc) + total(kp) * (w - elapsed) / w
  local room = math.floor(max - est - others - mine)
  if room > 0 and want > 0 then
    mine = mine + math.min(room, want)
  end
  local exp = now + lease
  if mine > 0 then
    redis.call('HSET', kg, id, mine .. ':' .. exp)
    redis.call('PEXPIRE', kg, ttl)
  else
    redis.call('HDEL', kg, id)
    exp = 0
  end
  out[#out + 1] = pc
  out[#out + 1] = redis.call('HGETALL', kc)
  out[#out + 1] = pp
  out[#out + 1] = redis.call('HGETALL', kp)
  out[#out + 1] = mine
  out[#out + 1] = exp
end
local t = redis.call('TIME')
out[#out + 1] = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return out
