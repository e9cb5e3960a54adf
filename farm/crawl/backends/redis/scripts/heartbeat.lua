-- This worker is alive; what is the shared state's epoch (missing: Redis lost everything)?
-- KEYS: 1 live workers (zset worker -> ms), 2 epoch
-- ARGV: 1 this worker
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
return {now, redis.call('GET', KEYS[2]) or ''}
