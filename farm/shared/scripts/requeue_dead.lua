-- Workers whose heartbeat stopped: their in-flight requests go back in the queue (with their
-- priority), their keywords to this worker, and they are forgotten.
-- KEYS: 1 live workers, 2 queue
-- ARGV: 1 timeout (ms), 2 this worker, 3 key prefix (the site's)
-- Returns {requests put back, adopted lease, adopted lease, ...}.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local me, prefix = ARGV[2], ARGV[3]
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
local out = {0}
for _, worker in ipairs(dead) do
  if worker ~= me then
    local taken = prefix .. ':taken:' .. worker
    local entries = redis.call('ZRANGE', taken, 0, -1, 'WITHSCORES')
    for i = 1, #entries, 2 do
      redis.call('ZADD', KEYS[2], entries[i + 1], entries[i])
      out[1] = out[1] + 1
    end
    redis.call('DEL', taken)
    local held = prefix .. ':leases:' .. worker
    for _, lease in ipairs(redis.call('SMEMBERS', held)) do
      redis.call('SADD', prefix .. ':leases:' .. me, lease)
      redis.call('HSET', prefix .. ':owner', lease, me)
      out[#out + 1] = lease
    end
    redis.call('DEL', held, prefix .. ':inbox:' .. worker)
    redis.call('ZREM', KEYS[1], worker)
  end
end
return out
