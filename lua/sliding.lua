-- sliding.lua: Cloudflare's sliding window counter, the same arithmetic as
-- core.WindowState.DecideSliding (float64, same operation order).
-- KEYS[1]: string "index:cur:prev" (window number, its count, the previous
-- window's count); absent means the zero state.
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

-- State: window index, its count, the previous window's count.
local idx, cur, prev = 0, 0, 0
local v = redis.call('GET', key)
if v then
  local a, b, c = string.match(v, '^(%-?%d+):(%d+):(%d+)$')
  idx, cur, prev = tonumber(a), tonumber(b), tonumber(c)
end

-- windowPos: a window older than the stored one (clock went backwards) is
-- counted in the stored window at elapsed 0, and lag (how far now lies
-- before that window's start) is added to RetryAfter and ResetAfter. Division of integers below
-- 2^53 rounds correctly, so math.floor gives the exact quotient.
local i = math.floor(now / w)
local elapsed = now - i * w
local lag = 0
if i < idx then
  i, elapsed, lag = idx, 0, idx * w - now
end

-- Roll to window i.
if i == idx + 1 then
  prev, cur = cur, 0
elseif i > idx + 1 then
  prev, cur = 0, 0
end

local est = cur + prev * (w - elapsed) / w
local allowed = est < max - n + 1
if allowed and commit then
  cur = cur + n
  est = est + n
  -- the key lives until no request can still be counted in it, at most
  -- two windows after this write: a write lagging the state (a clock put
  -- back) does not stretch it by the lag, or the identity stays denied
  -- for as long as the clock was ahead
  local ttl = math.min((i + 2) * w - now, 2 * w) + slack
  redis.call('SET', key, string.format('%d:%d:%d', i, cur, prev), 'PX', string.format('%d', ttl))
end

local retry = 0
if not allowed then
  local room = max - n + 1
  if cur < room then
    local x = w - (room - cur) * w / prev
    retry = lag + math.max(0, math.floor(x) + 1 - elapsed)
  else
    local x = w - room * w / cur
    retry = lag + w - elapsed + math.max(0, math.floor(x) + 1)
  end
end

local remaining = math.ceil(max - est)
if remaining < 0 then
  remaining = 0
end

local reset = 0
if cur > 0 then
  reset = lag + 2 * w - elapsed
elseif prev > 0 then
  reset = lag + w - elapsed
end

return {allowed and 1 or 0, remaining, retry, reset}
