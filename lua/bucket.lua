-- bucket.lua: the token bucket as GCRA in microseconds, the same arithmetic
-- as core.BucketState.Decide.
-- KEYS[1]: string, the theoretical arrival time (TAT) in µs since the Unix
-- epoch: its whole µs, then, when it has a fraction of a µs, '.' and the
-- fraction's numerator over max in decimal ("1764979200000333.1" is
-- 1764979200000333 + 1/max µs). Read as a plain number the value is the
-- TAT to within 1 µs. Absent means 0 (a full bucket).
-- ARGV: now_ms, window_ms, max, n, commit, server_time, slack_ms.
-- Returns {allowed, remaining, retry_ms, reset_ms}.
--
-- Lua numbers are float64: integers are exact below 2^53, and the quotient
-- of two such integers rounds correctly, so math.floor(a / b) is the exact
-- integer quotient for a >= 0. Products that may pass 2^53 (units × window,
-- max × time) go through muldiv, which never forms them, and the TAT after
-- the units, which may pass it too, is formed only when they fit.

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

local two53 = 9007199254740992

-- ceil(a / b) for a > 0, else 0 (core's ceilDiv).
local function ceildiv(a, b)
  if a <= 0 then
    return 0
  end
  return math.floor((a + b - 1) / b)
end

-- muldiv returns q, r with a * b = q * m + r and 0 <= r < m (core's mulDiv),
-- for integers a, b >= 0 and 0 < m < 2^52 whose quotient is below 2^53.
-- Below 2^53 the product is exact; above, a * (b mod m) is built bit by bit
-- of a, every partial remainder below 2m.
local function muldiv(a, b, m)
  if a * b < two53 then
    local q = math.floor(a * b / m)
    return q, a * b - q * m
  end
  local bq = math.floor(b / m)
  local br = b - bq * m
  local q, r = a * bq, 0
  local bit = 1
  while bit * 2 <= a do
    bit = bit * 2
  end
  local rest = a
  local pq = 0
  while bit >= 1 do
    pq, r = pq * 2, r * 2
    if r >= m then
      pq, r = pq + 1, r - m
    end
    if rest >= bit then
      rest = rest - bit
      r = r + br
      if r >= m then
        pq, r = pq + 1, r - m
      end
    end
    bit = bit / 2
  end
  return q + pq, r
end

local wus = w * 1000
local nowus = now * 1000
local tat, rem = 0, 0
local v = redis.call('GET', key)
if v then
  local dot = string.find(v, '.', 1, true)
  if dot then
    tat = tonumber(string.sub(v, 1, dot - 1))
    rem = tonumber(string.sub(v, dot + 1))
    if rem >= max then -- not a value this script writes: fold it in
      local carry = math.floor(rem / max)
      tat, rem = tat + carry, rem - carry * max
    end
  else
    tat = tonumber(v)
  end
end
if tat < nowus then
  tat, rem = nowus, 0
end

local q, r = muldiv(n, wus, max)
local carry, nrem = 0, rem + r
if nrem >= max then
  carry, nrem = 1, nrem - max
end
-- over: how far past now + window the TAT after the units lies (core's
-- ahead − W), summed without that TAT, which passes 2^53 µs when a long
-- window's bucket is nearly empty late in core.MaxMillis' range; an
-- allowed TAT is at most now + window, below it
local over = (tat - nowus - wus) + q + carry
local allowed = over < 0 or (over == 0 and nrem == 0)
if allowed and commit then
  local nxt = tat + q + carry
  tat, rem = nxt, nrem
  local ttl = ceildiv(over + wus + (nrem > 0 and 1 or 0), 1000) + slack
  local val = string.format('%d', nxt)
  if nrem > 0 then
    val = val .. '.' .. string.format('%d', nrem)
  end
  redis.call('SET', key, val, 'PX', string.format('%d', ttl))
end

local retry = 0
if not allowed then
  retry = ceildiv(over + (nrem > 0 and 1 or 0), 1000)
end
local remaining = 0
local room = wus - (tat - nowus)
if room > 0 then
  local rq, rr = muldiv(max, room, wus)
  if rr < rem then
    rq = rq - 1
  end
  if rq > 0 then
    remaining = rq
  end
end
local reset = ceildiv(tat - nowus + (rem > 0 and 1 or 0), 1000)

return {allowed and 1 or 0, remaining, retry, reset}
