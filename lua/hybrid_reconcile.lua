-- edgelimit hybrid reconcile: merge one PoP's cumulative counts into the
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
--
-- Redis CPU: each hash is read once, by HGETALL, into its flat {field,
-- value, ...} array; a merge that raises the field writes it (one HSET, one
-- PEXPIRE) and updates the array in place (a changed field keeps its place,
-- a new one is appended: what a small hash, a listpack, does), and the
-- array is the reply: HGETALL after the write. A written hash of more than
-- 128 fields or with a string over 64 bytes is read back instead: past
-- hash-max-listpack-entries or -value (assumed at least that, Redis'
-- defaults) Redis keeps a hash table, whose order is its own. A count
-- equal to the stored string is not parsed, and `s + 0` converts exactly
-- as tonumber(s) does (both are Lua's luaO_str2d) for half the cost. A key
-- named twice is read twice, the second time after the first one's write.
local id, ttl = ARGV[1], ARGV[2]

-- small reports whether a's hash is a listpack (see above).
local function small(a)
  if #a > 256 then return false end
  for j = 1, #a do
    if #a[j] > 64 then return false end
  end
  return true
end

local out = {}
for i = 1, #KEYS do
  local k, v = KEYS[i], ARGV[2 + i]
  local a = redis.call('HGETALL', k)
  local j, s
  for x = 1, #a, 2 do
    if a[x] == id then
      j, s = x, a[x + 1]
      break
    end
  end
  local prior = (s or 0) + 0
  if s ~= v and v + 0 > prior then
    redis.call('HSET', k, id, v)
    redis.call('PEXPIRE', k, ttl)
    if not j then
      j = #a + 1
      a[j] = id
    end
    a[j + 1] = v
    if not small(a) then a = redis.call('HGETALL', k) end
  end
  out[#out + 1] = prior
  out[#out + 1] = a
end
local t = redis.call('TIME')
out[#out + 1] = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return out
