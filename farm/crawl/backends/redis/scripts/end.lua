-- A keyword's lease ended (completed, failed, blocked, released, lost), whichever worker ended it:
-- its queued requests are dropped at the pop, and its owner (who claimed or adopted it) is told.
-- KEYS: 1 ends (zset lease -> until, ms of Redis' clock), 2 owners (hash lease -> worker)
-- ARGV: 1 lease, 2 outcome, 3 how long the end is kept (s), 4 this worker, 5 key prefix (the site's)
-- Each end keeps its own lifetime; the ones past theirs are trimmed here.
-- Returns the owner ('' when none is known).
local lease, prefix = ARGV[1], ARGV[5]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZADD', KEYS[1], 'GT', now + tonumber(ARGV[3]) * 1000, lease)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then redis.call('PEXPIREAT', KEYS[1], last[2]) end
local owner = redis.call('HGET', KEYS[2], lease)
if owner then
  redis.call('HDEL', KEYS[2], lease)
  redis.call('SREM', prefix .. ':leases:' .. owner, lease)
  if owner ~= ARGV[4] then redis.call('RPUSH', prefix .. ':inbox:' .. owner, lease .. ' ' .. ARGV[2]) end
  return owner
end
return ''
