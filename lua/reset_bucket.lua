-- reset_bucket.lua: forgets one identity on the bucketed layout (see
-- sliding_bucket.lua): deletes its field from every window hash a decision
-- can still read: the bucket's newest window (its marker's value) and the
-- horizon + 1 windows before it, which a request late by up to horizon
-- windows reads, and, as a bucket mate stamped far ahead moves the marker
-- away from the identity's counts, the windows of a request stamped within
-- horizon windows of now (horizon + 1 before now's window, horizon after,
-- none past the marker). The hashes keep their newest-window flag and the
-- marker stays, as other identities may use the bucket; all expire by
-- their TTLs.
-- KEYS[1]: the bucket's marker. ARGV: identity, horizon, now_ms (the
-- resetting limiter's clock; ignored when ARGV[5] is 1), window_ms,
-- server_time.
-- Returns how many fields were deleted.

local mkey = KEYS[1]
local base = string.sub(mkey, 1, -2)
local id = ARGV[1]
local horizon = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local w = tonumber(ARGV[4])
if ARGV[5] == '1' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local m = tonumber(redis.call('GET', mkey) or '')
local deleted = 0
local function clear(hi, lo)
  for j = hi, lo, -1 do
    deleted = deleted + redis.call('HDEL', base .. string.format('%d', j), id)
  end
end
if m then
  local lo = m - horizon - 1
  clear(m, lo)
  -- the windows around now, less those cleared above (no field lies past
  -- the marker)
  local c = math.floor(now / w)
  local hi = math.min(c + horizon, m)
  local low = c - horizon - 1
  if hi >= lo then
    hi = lo - 1
  end
  clear(hi, low)
end
return deleted
