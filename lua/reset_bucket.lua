-- reset_bucket.lua: forgets one identity on the bucketed layout (see
-- sliding_bucket.lua): deletes its field from every window hash a decision
-- can still read, the bucket's newest window (its marker's value) and the
-- horizon + 1 windows before it. The hashes keep their newest-window flag
-- and the marker stays, as other identities may use the bucket; all expire
-- by their TTLs.
-- KEYS[1]: the bucket's marker. ARGV: identity, horizon.
-- Returns how many fields were deleted.

local mkey = KEYS[1]
local base = string.sub(mkey, 1, -2)
local id = ARGV[1]
local horizon = tonumber(ARGV[2])
local m = tonumber(redis.call('GET', mkey) or '')
local deleted = 0
if m then
  for j = m, m - horizon - 1, -1 do
    deleted = deleted + redis.call('HDEL', base .. string.format('%d', j), id)
  end
end
return deleted
