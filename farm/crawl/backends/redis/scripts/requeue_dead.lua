-- Workers whose heartbeat stopped: their in-flight requests go back in the queue (with their
-- priority), their keywords to this worker, and they are forgotten. This worker also takes on
-- looking up, in the keyword table, what each of them holds (a keyword claimed and not yet listed
-- here) and what each was taking on itself.
-- KEYS: 1 live workers, 2 queue
-- ARGV: 1 timeout (ms), 2 this worker, 3 key prefix (the site's)
-- Returns {requests put back, {adopted lease, ...}, {worker whose keywords to look up, ...}}.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local me, prefix = ARGV[2], ARGV[3]
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
local requeued, adopted, look_up = 0, {}, {}
local mine = prefix .. ':taking:' .. me
for _, worker in ipairs(dead) do
  if worker ~= me then
    local taken = prefix .. ':taken:' .. worker
    local entries = redis.call('ZRANGE', taken, 0, -1, 'WITHSCORES')
    for i = 1, #entries, 2 do
      redis.call('ZADD', KEYS[2], entries[i + 1], entries[i])
      requeued = requeued + 1
    end
    local held = prefix .. ':leases:' .. worker
    for _, lease in ipairs(redis.call('SMEMBERS', held)) do
      redis.call('SADD', prefix .. ':leases:' .. me, lease)
      redis.call('HSET', prefix .. ':owner', lease, me)
      adopted[#adopted + 1] = lease
    end
    local taking = prefix .. ':taking:' .. worker
    redis.call('SADD', mine, worker)
    for _, other in ipairs(redis.call('SMEMBERS', taking)) do redis.call('SADD', mine, other) end
    redis.call('DEL', taken, held, taking, prefix .. ':inbox:' .. worker, prefix .. ':calls:' .. worker)
    redis.call('ZREM', KEYS[1], worker)
  end
end
if #dead > 0 then
  for _, worker in ipairs(redis.call('SMEMBERS', mine)) do
    if worker ~= me then look_up[#look_up + 1] = worker end
  end
end
return {requeued, adopted, look_up}
