-- log.lua: the exact sliding log, the same arithmetic as core.LogState.Decide.
-- KEYS[1]: sorted set, one member per admitted unit, scored by its time in
-- ms. The members of score s are named "s:1" .. "s:c": a new unit at s takes
-- the next number, and expiry removes whole scores, so names never collide.
-- At most max members are kept once expired ones are trimmed.
-- ARGV: now_ms, window_ms, max, n, commit, server_time, slack_ms.
-- Returns {allowed, remaining, retry_ms, reset_ms}.

local key = KEYS[1]
local now = tonumber(ARGV[1])
local w = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
local n = tonumber(ARGV[4])
local commit = ARGV[5] == '1'
local slack = tonumber(ARGV[7])
if ARGV[6] == '1' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function fmt(x)
  return string.format('%d', x)
end

-- The log counts (now - window, now]: stamps <= cut are expired. A peek
-- only skips them; a commit removes them.
local cut = fmt(now - w)
local dropped = redis.call('ZCOUNT', key, '-inf', cut)
if commit and dropped > 0 then
  redis.call('ZREMRANGEBYSCORE', key, '-inf', cut)
  dropped = 0
end
local count = redis.call('ZCARD', key) - dropped

-- stamp returns the score of the live stamp at 0-based position i.
local function stamp(i)
  local r = redis.call('ZRANGE', key, dropped + i, dropped + i, 'WITHSCORES')
  return tonumber(r[2])
end

-- insert adds n members scored now, in chunks to stay under Lua's stack.
local function insert()
  local base = redis.call('ZCOUNT', key, fmt(now), fmt(now))
  local args = {}
  for k = 1, n do
    args[#args + 1] = fmt(now)
    args[#args + 1] = fmt(now) .. ':' .. fmt(base + k)
    if #args >= 200 or k == n then
      redis.call('ZADD', key, unpack(args))
      args = {}
    end
  end
end

local allowed = count + n <= max
if allowed and commit then
  insert()
  count = count + n
end

local retry = 0
if not allowed then
  retry = math.max(0, stamp(count + n - max - 1) + w - now)
end
local remaining = math.max(0, max - count)
local reset = 0
if count > 0 then
  reset = math.max(0, stamp(count - 1) + w - now)
end
if allowed and commit then
  redis.call('PEXPIRE', key, fmt(math.max(reset, 1) + slack))
end

return {allowed and 1 or 0, remaining, retry, reset}
