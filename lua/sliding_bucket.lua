-- sliding_bucket.lua: the sliding window counter on the bucketed layout,
-- the same arithmetic as core.WindowState.DecideSliding (and sliding.lua).
-- Identities share a bucket; the bucket keeps one hash per window number j,
-- key base..j (base is KEYS[1] without its final "m"), field = identity,
-- value = its count in window j, plus field "" flagging whether it is the
-- bucket's newest window ("0") or not ("1"). KEYS[1], the bucket's marker,
-- holds the newest window number written in the bucket and outlives every
-- window hash. An admitted decision in an existing window hash runs three
-- commands: HMGET (count and flag), HGET (previous window), HINCRBY.
-- ARGV: now_ms, window_ms, max, n, commit, server_time, slack_ms, identity,
-- horizon (how many windows past the request's a clock-back search looks).
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

-- windowPos against the identity's newest window (core's Index): the
-- newest window at or after now's holding its field. Every window hash
-- holds a flag, field "" (no identity is empty): "0" in the bucket's
-- newest window, "1" in any older one. Only when the request's window is
-- missing or flagged "1" can newer windows exist; the marker names the
-- newest, and they are searched down from it, at most horizon of them.
-- The zero state's Index is 0.
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
-- The previous window's count is prev whether the identity's Index is i
-- (counted in both) or i-1 (rolled by one); it is absent otherwise.
local prev = tonumber(redis.call('HGET', wkey(i - 1), id) or '0')

local est = cur + prev * (w - elapsed) / w
local allowed = est < max - n + 1
if allowed and commit then
  cur = cur + n
  est = est + n
  local hkey = wkey(i)
  redis.call('HINCRBY', hkey, id, n)
  if not found and not flag then
    -- A new window hash (m was read above): flag it, give it its TTL (from
    -- the stamp to the end of the state it holds, plus slack; later stamps
    -- of the window reaching Redis as promptly give the same expiry, so it
    -- is not rewritten per call as one key per identity does), make the
    -- marker outlive it, and when it is the bucket's new newest window,
    -- flag the previous newest as older.
    local ttl = string.format('%d', (i + 2) * w - now + slack)
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
