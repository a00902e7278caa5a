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
