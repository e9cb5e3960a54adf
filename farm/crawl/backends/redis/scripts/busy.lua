-- Whether the queue or any live worker's in-flight set holds requests, or another live worker is taking
-- keywords on (claiming, or adopting a stopped worker's); and the live workers.
-- KEYS: 1 live workers (zset worker -> ms), 2 queue
-- ARGV: 1 this worker, 2 key prefix (the site's)
-- Returns {1 busy | 0, {live worker, ...}}.
local live = redis.call('ZRANGE', KEYS[1], 0, -1)
if redis.call('ZCARD', KEYS[2]) > 0 then return {1, live} end
for _, worker in ipairs(live) do
  if redis.call('ZCARD', ARGV[2] .. ':taken:' .. worker) > 0 then return {1, live} end
  if worker ~= ARGV[1] and redis.call('SCARD', ARGV[2] .. ':taking:' .. worker) > 0 then return {1, live} end
end
return {0, live}
