-- A keyword's lease ended (completed, failed, blocked, released, lost), whichever worker ended it:
-- its queued requests are dropped at the pop, and its owner (who claimed or adopted it) is told.
-- KEYS: 1 ended leases (set), 2 owners (hash lease -> worker)
-- ARGV: 1 lease, 2 outcome, 3 ttl (s), 4 this worker, 5 key prefix (the site's)
-- Returns the owner ('' when none is known).
local lease, prefix = ARGV[1], ARGV[5]
redis.call('SADD', KEYS[1], lease)
if redis.call('TTL', KEYS[1]) == -1 then redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3])) end
local owner = redis.call('HGET', KEYS[2], lease)
if owner then
  redis.call('HDEL', KEYS[2], lease)
  redis.call('SREM', prefix .. ':leases:' .. owner, lease)
  if owner ~= ARGV[4] then redis.call('RPUSH', prefix .. ':inbox:' .. owner, lease .. ' ' .. ARGV[2]) end
  return owner
end
return ''
