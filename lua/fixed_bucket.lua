-- fixed_bucket.lua: the fixed window on the bucketed layout, the same
-- arithmetic as core.WindowState.DecideFixed (and fixed.lua). Keys and
-- ARGV as in sliding_bucket.lua: KEYS[1] the bucket's marker (newest window
-- number written), window hashes base..j (field = identity, value = its
-- count; field "" the newest-window flag); ARGV now_ms, window_ms, max, n,
-- commit, server_time, slack_ms, identity, horizon.
-- Returns {allowed, remaining, retry_ms, reset_ms}.

local mkey = KEYS[1]
local base = string.sub(mkey, 1, -2)
local now = tonumber(ARGV[1])
local w = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
local n = tonumber(ARGV[4])
local commit = ARGV[5] == '1'
local slack = tonumber(ARGV[7])
local id = ARGV[8]
local horizon = tonumber(ARGV[9])
if ARGV[6] == '1' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function wkey(j)
  return base .. string.format('%d', j)
end

-- windowPos against the identity's newest window, as in sliding_bucket.lua.
local i = math.floor(now / w)
local elapsed = now - i * w
local lag = 0
if i < 0 then
  i, elapsed, lag = 0, 0, -now
end
local here = redis.call('HMGET', wkey(i), id, '')
local flag = here[2]
local m = nil
local cur = 0
local found = false
if flag ~= '0' then
  m = tonumber(redis.call('GET', mkey) or '')
  if m and m > i then
    for j = m, math.max(i + 1, m - horizon + 1), -1 do
      local c = redis.call('HGET', wkey(j), id)
      if c then
        i, elapsed, lag, cur, found = j, 0, j * w - now, tonumber(c), true
        break
      end
    end
  end
end
if not found and here[1] then
  cur = tonumber(here[1])
end

local allowed = cur + n <= max
if allowed and commit then
  cur = cur + n
  local hkey = wkey(i)
  redis.call('HINCRBY', hkey, id, n)
  if not found and not flag then
    -- A new window hash, as in sliding_bucket.lua.
    local ttl = string.format('%d', (i + 1) * w - now + slack)
    redis.call('PEXPIRE', hkey, ttl)
    if not m then
      redis.call('HSET', hkey, '', '0')
      redis.call('SET', mkey, string.format('%d', i), 'PX', ttl)
    else
      if i > m then
        redis.call('HSET', hkey, '', '0')
        if redis.call('EXISTS', wkey(m)) == 1 then
          redis.call('HSET', wkey(m), '', '1')
        end
        redis.call('SET', mkey, string.format('%d', i), 'KEEPTTL')
      else
        redis.call('HSET', hkey, '', i == m and '0' or '1')
      end
      redis.call('PEXPIRE', mkey, ttl, 'GT')
    end
  end
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
