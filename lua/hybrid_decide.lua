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
