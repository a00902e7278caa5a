-- bucket_rounded.lua: bucket.lua as released before the token bucket's TAT
-- carried a fraction of a µs (its interval rounded down to whole µs), kept
-- to check that such a script, still running in a process not yet
-- upgraded, reads the values the new script writes (see
-- TestRoundedScriptReadsFractions).
-- bucket.lua: the token bucket as GCRA in integer microseconds, the same
-- arithmetic as core.BucketState.Decide.
-- KEYS[1]: string TAT, the theoretical arrival time in µs since the Unix
-- epoch; absent means 0 (a full bucket).
-- ARGV: now_ms, window_ms, max, n, commit, server_time, slack_ms.
-- Returns {allowed, remaining, retry_ms, reset_ms}.
--
-- Lua numbers are float64: integers are exact below 2^53, and the quotient
-- of two such integers rounds correctly, so math.floor(a / b) is the exact
-- integer quotient for a >= 0.

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

-- ceil(a / b) for a > 0, else 0 (core's ceilDiv).
local function ceildiv(a, b)
  if a <= 0 then
    return 0
  end
  return math.floor((a + b - 1) / b)
end

local wus = w * 1000
local t = (wus - wus % max) / max
local tau = t * max
local nowus = now * 1000
local tat = tonumber(redis.call('GET', key) or '0')
if tat < nowus then
  tat = nowus
end

local nxt = tat + n * t
local allowed = nxt - nowus <= tau
if allowed and commit then
  tat = nxt
  local ttl = ceildiv(nxt - nowus, 1000) + slack
  redis.call('SET', key, string.format('%d', nxt), 'PX', string.format('%d', ttl))
end

local retry = 0
if not allowed then
  retry = ceildiv(nxt - tau - nowus, 1000)
end
local remaining = 0
local room = tau - (tat - nowus)
if room > 0 then
  remaining = math.floor(room / t)
end
local reset = ceildiv(tat - nowus, 1000)

return {allowed and 1 or 0, remaining, retry, reset}
