-- Workers whose heartbeat stopped: their in-flight requests go back in the queue (with their
-- priority), their keywords to this worker, and they are forgotten. This worker also takes on
-- looking up, in the keyword table, what each of them holds (a keyword claimed and not yet listed
-- here) and what each was taking on itself. The ends past their lifetime are trimmed here too (a
-- worker's maintenance, every few heartbeats).
-- KEYS: 1 live workers, 2 queue
-- ARGV: 1 timeout (ms), 2 this worker, 3 key prefix (the site's), 4 Redis' time (ms; none: read here)
-- Returns {requests put back, {adopted lease, ...}, {worker whose keywords to look up, ...}}.
local now = tonumber(ARGV[4])  -- Redis' clock, read by the caller (the heartbeat), else here
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local me, prefix = ARGV[2], ARGV[3]
redis.call('ZREMRANGEBYSCORE', prefix .. ':ends', '-inf', now)
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
local requeued, adopted, look_up, stopped = 0, {}, {}, {}
local mine = prefix .. ':taking:' .. me
for _, worker in ipairs(dead) do
  if worker ~= me then
    local taken = prefix .. ':taken:' .. worker
    local entries = redis.call('ZRANGE', taken, 0, -1, 'WITHSCORES')
    for i = 1, #entries, 2 do
      redis.call('ZADD', KEYS[2], entries[i + 1], entries[i])
      requeued = requeued + 1
    end
    stopped[worker] = true
    local taking = prefix .. ':taking:' .. worker
    redis.call('SADD', mine, worker)
    for _, other in ipairs(redis.call('SMEMBERS', taking)) do redis.call('SADD', mine, other) end
    redis.call('DEL', taken, taking, prefix .. ':inbox:' .. worker, prefix .. ':calls:' .. worker)
    redis.call('ZREM', KEYS[1], worker)
  end
end
if next(stopped) then  -- the keywords they claimed or adopted are this worker's now
  local owners, moved = redis.call('HGETALL', prefix .. ':owner'), {}
  for i = 1, #owners, 2 do
    if stopped[owners[i + 1]] then
      adopted[#adopted + 1] = owners[i]
      moved[#moved + 1] = owners[i]
      moved[#moved + 1] = me
    end
  end
  if #moved > 0 then redis.call('HSET', prefix .. ':owner', unpack(moved)) end
end
if #dead > 0 then
  for _, worker in ipairs(redis.call('SMEMBERS', mine)) do
    if worker ~= me then look_up[#look_up + 1] = worker end
  end
end
return {requeued, adopted, look_up}
