-- log.lua: the exact sliding log, the same arithmetic as core.LogState.Decide.
-- KEYS[1]: sorted set, one member per admitted request (requests of the same
-- ms share one), scored by its time in ms. Member "s:c" counts one unit and
-- "s:c:u" counts u, where s is the score and c numbers the members of score
-- s (a request at s adds its units to a member of score s when there is one,
-- keeping its s:c, else becomes "s:1"; expiry removes whole scores, so names
-- never collide). One more member, "#T" scored +inf, holds T, the units of
-- all the others, expired ones included until a commit trims them. A key
-- without it was written when every member was one unit: its T is ZCARD.
-- At most max members besides "#T" are kept once expired ones are trimmed.
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

-- units is the weight of member m: its third field, else 1.
local function units(m)
  local u = string.match(m, '^[^:]*:[^:]*:(%d+)$')
  if u then
    return tonumber(u)
  end
  return 1
end

-- The total T and its member; card counts the other members, the newest
-- of which is newestMember, scored newest.
local card = redis.call('ZCARD', key)
local total = card
local totalMember, newestMember, newest = nil, nil, nil
local top = redis.call('ZRANGE', key, -2, -1, 'WITHSCORES')
for p = #top - 1, 1, -2 do
  if string.sub(top[p], 1, 1) == '#' then
    totalMember = top[p]
    total = tonumber(string.sub(totalMember, 2))
    card = card - 1
  elseif not newest then
    newestMember, newest = top[p], tonumber(top[p + 1])
  end
end
local dirty = false

-- sum adds the units of the members at 0-based positions i..j, read in
-- pages so a long range never builds a long reply.
local function sum(i, j)
  local u = 0
  while i <= j do
    local page = redis.call('ZRANGE', key, i, math.min(j, i + 999))
    for _, m in ipairs(page) do
      u = u + units(m)
    end
    i = i + 1000
  end
  return u
end

-- The log counts (now - window, now]: stamps <= cut are expired. A peek
-- only skips them; a commit removes them and their units from T.
local cut = fmt(now - w)
local dropped = redis.call('ZCOUNT', key, '-inf', cut)
if commit and dropped > 0 then
  total = total - sum(0, dropped - 1)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', cut)
  card = card - dropped
  dropped = 0
  dirty = true
  if card == 0 then
    newestMember, newest = nil, nil
  end
end
-- The live units, summed over the shorter side of the cut.
local count
if dropped <= card - dropped then
  count = total - sum(0, dropped - 1)
else
  count = sum(dropped, card - 1)
end

-- insert adds n units at now: to a member of score now (the newest one,
-- or, when now is older than the newest, one found by score), or as a new
-- one.
local function insert()
  local s = fmt(now)
  local same = nil
  if newest == now then
    same = newestMember
  elseif newest and newest > now then
    same = redis.call('ZRANGEBYSCORE', key, s, s, 'LIMIT', 0, 1)[1]
  end
  if same then
    local c = string.match(same, '^[^:]*:([^:]*)')
    redis.call('ZREM', key, same)
    redis.call('ZADD', key, s, s .. ':' .. c .. ':' .. fmt(units(same) + n))
  elseif n == 1 then
    redis.call('ZADD', key, s, s .. ':1')
  else
    redis.call('ZADD', key, s, s .. ':1:' .. fmt(n))
  end
  if not newest or newest < now then
    newest = now
  end
  total = total + n
  dirty = true
end

local allowed = count + n <= max
if allowed and commit then
  insert()
  count = count + n
end

-- unitAt returns the score of the k-th oldest of the count live units
-- (1-based): the live member at which the running sum of units reaches k,
-- counted from the nearer end (as core does), read in pages that double
-- from min(k, 8) members (the k-th unit lies within k members). For a T
-- that disagrees with the members it is the score of the last member read,
-- or now.
local function unitAt(k)
  local old = k <= count - k + 1
  if not old then
    k = count - k + 1
  end
  local lo, hi, size, last = dropped, card - 1, math.min(k, 8), now
  while lo <= hi do
    local i, j = lo, math.min(hi, lo + size - 1)
    if not old then
      i, j = math.max(lo, hi - size + 1), hi
    end
    local page = redis.call('ZRANGE', key, i, j, 'WITHSCORES')
    local first, stop, step = 1, #page - 1, 2
    if not old then
      first, stop, step = #page - 1, 1, -2
    end
    for p = first, stop, step do
      last = tonumber(page[p + 1])
      k = k - units(page[p])
      if k <= 0 then
        return last
      end
    end
    if old then
      lo = j + 1
    else
      hi = i - 1
    end
    size = math.min(size * 2, 1024)
  end
  return last
end

local retry = 0
if not allowed then
  retry = math.max(0, unitAt(count + n - max) + w - now)
end
local remaining = math.max(0, max - count)
local reset = 0
if count > 0 then
  reset = math.max(0, newest + w - now)
end
if dirty then
  if totalMember then
    redis.call('ZREM', key, totalMember)
  end
  if total > 0 then
    redis.call('ZADD', key, '+inf', '#' .. fmt(total))
  end
end
if allowed and commit then
  -- at most a window after this write: a write lagging the newest member
  -- (a clock put back) does not stretch the TTL by the lag (see sliding.lua)
  redis.call('PEXPIRE', key, fmt(math.min(math.max(reset, 1), w) + slack))
end

return {allowed and 1 or 0, remaining, retry, reset}
