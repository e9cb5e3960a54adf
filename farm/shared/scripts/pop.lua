-- Take up to n requests for this worker, at the site's shared pace.
-- KEYS: 1 queue, 2 payloads, 3 this worker's in-flight (zset id -> queue score), 4 pace (hash),
--       5 lease of, 6 ended leases, 7 open
-- ARGV: 1 n, 2 jitter in [0, 1)
-- Returns {ms to wait} when the pace says wait, else {0, id, payload, lease, id, payload, lease, ...}.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local pace = redis.call('HMGET', KEYS[4], 'next_at', 'interval', 'penalty')
local next_at = tonumber(pace[1]) or 0
if now < next_at then return {next_at - now} end
local gap = math.max(tonumber(pace[2]) or 0, tonumber(pace[3]) or 0)
local n = tonumber(ARGV[1])
if gap > 0 then n = 1 end  -- a paced site: one request per turn
local out = {0}
local taken = 0
while taken < n do
  local top = redis.call('ZPOPMIN', KEYS[1], 1)
  if #top == 0 then break end
  local id, score = top[1], top[2]
  local payload = redis.call('HGET', KEYS[2], id)
  local lease = redis.call('HGET', KEYS[5], id)
  if payload and lease and redis.call('SISMEMBER', KEYS[6], lease) == 1 then
    -- its keyword has ended: drop it here, not in a worker
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[5], id)
    if redis.call('HINCRBY', KEYS[7], lease, -1) <= 0 then redis.call('HDEL', KEYS[7], lease) end
  elseif payload then
    redis.call('ZADD', KEYS[3], score, id)
    out[#out + 1] = id
    out[#out + 1] = payload
    out[#out + 1] = lease or ''
    taken = taken + 1
  end
end
if taken > 0 and gap > 0 then
  redis.call('HSET', KEYS[4], 'next_at', now + math.floor(gap * (0.5 + tonumber(ARGV[2]))))
end
return out
