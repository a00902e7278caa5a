-- fixed.lua: the fixed window, the same arithmetic as
-- core.WindowState.DecideFixed.
-- KEYS[1]: string "index:cur" (window number and its count); absent means
-- the zero state.
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

local idx, cur = 0, 0
local v = redis.call('GET', key)
if v then
  local a, b = string.match(v, '^(%-?%d+):(%d+)$')
  idx, cur = tonumber(a), tonumber(b)
end

-- windowPos, as in sliding.lua: an older window counts in the stored one,
-- and lag is added to the durations.
local i = math.floor(now / w)
local elapsed = now - i * w
local lag = 0
if i < idx then
  i, elapsed, lag = idx, 0, idx * w - now
end
if i > idx then
  cur = 0
end

local allowed = cur + n <= max
if allowed and commit then
  cur = cur + n
  -- at most a window after this write: a write lagging the state (a
  -- clock put back) does not stretch it by the lag (see sliding.lua)
  local ttl = math.min((i + 1) * w - now, w) + slack
  redis.call('SET', key, string.format('%d:%d', i, cur), 'PX', string.format('%d', ttl))
end

local retry = 0
if not allowed then
  retry = lag + w - elapsed
end
local remaining = math.max(0, max - cur)
local reset = 0
if cur > 0 then
  reset = lag + w - elapsed
end

return {allowed and 1 or 0, remaining, retry, reset}
