-- A proxy drew a block: quarantined for every worker until Redis' now + the quarantine.
-- KEYS: 1 quarantined (zset: proxy id -> until, ms of Redis' clock)
-- ARGV: 1 proxy id (a hash: no credentials in Redis), 2 quarantine ms
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZADD', KEYS[1], 'GT', now + tonumber(ARGV[2]), ARGV[1])  -- a later quarantine wins
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
-- the key lives as long as its last quarantine: nothing is left behind
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then redis.call('PEXPIREAT', KEYS[1], last[2]) end
return now + tonumber(ARGV[2])
