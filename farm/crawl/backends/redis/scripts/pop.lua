-- Take up to n requests for this worker, at the site's shared pace.
-- KEYS: 1 queue, 2 payloads, 3 this worker's in-flight (zset id -> queue score), 4 pace (hash),
--       5 lease of, 6 ends (zset lease -> until, ms), 7 open, 8 this worker's calls (hash, see once.lua)
-- ARGV: 1 n, 2 jitter in [0, 1), 3 the site's interval (ms; '' unknown), 4 this worker's back-off (ms),
--       5 call id, 6 how long the calls are kept (ms), 7 the call id it forgets
-- Returns {ms to wait} when the pace says wait, else {0, id, payload, lease, id, payload, lease, ...}.
-- Made again under the same call id (its reply lost), it answers the requests that call took and
-- this worker still holds: a lost reply strands nothing in its in-flight set. Only their ids are kept.
local out = {0}
local done = redis.call('HGET', KEYS[8], ARGV[5])
if done then
  for id in string.gmatch(done, '%S+') do
    local payload = redis.call('HGET', KEYS[2], id)
    if payload and redis.call('ZSCORE', KEYS[3], id) then
      out[#out + 1] = id
      out[#out + 1] = payload
      out[#out + 1] = redis.call('HGET', KEYS[5], id) or ''
    end
  end
  return out
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local pace = redis.call('HMGET', KEYS[4], 'next_at', 'interval', 'penalty')
if ARGV[3] ~= '' then
  -- the pace lost (a flush, a restart without persistence): every pop carries it back, the interval
  -- and, if this worker backed off, its back-off (a back-off writes the penalty, an ease keeps it)
  if not pace[2] then
    pace[2] = ARGV[3]
    redis.call('HSET', KEYS[4], 'interval', pace[2])
  end
  if not pace[3] and tonumber(ARGV[4]) > 0 then
    pace[3] = ARGV[4]
    redis.call('HSET', KEYS[4], 'penalty', pace[3])
  end
end
local next_at = tonumber(pace[1]) or 0
if now < next_at then return {next_at - now} end
local gap = math.max(tonumber(pace[2]) or 0, tonumber(pace[3]) or 0)
local n = tonumber(ARGV[1])
if gap > 0 then n = 1 end  -- a paced site: one request per turn
local taken = {}
while #taken < n do
  local top = redis.call('ZPOPMIN', KEYS[1], 1)
  if #top == 0 then break end
  local id, score = top[1], top[2]
  local payload = redis.call('HGET', KEYS[2], id)
  local lease = redis.call('HGET', KEYS[5], id)
  local ended = lease and tonumber(redis.call('ZSCORE', KEYS[6], lease) or 0) > now
  if payload and ended then
    -- its keyword has ended: drop it here, not in a worker
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[5], id)
    if redis.call('HINCRBY', KEYS[7], lease, -1) <= 0 then redis.call('HDEL', KEYS[7], lease) end
  elseif payload then
    redis.call('ZADD', KEYS[3], score, id)
    out[#out + 1] = id
    out[#out + 1] = payload
    out[#out + 1] = lease or ''
    taken[#taken + 1] = id
  end
end
if #taken > 0 then
  if gap > 0 then redis.call('HSET', KEYS[4], 'next_at', now + math.floor(gap * (0.5 + tonumber(ARGV[2])))) end
  redis.call('HSET', KEYS[8], ARGV[5], table.concat(taken, ' '))
  redis.call('HDEL', KEYS[8], ARGV[7])
  redis.call('PEXPIRE', KEYS[8], tonumber(ARGV[6]))
end
return out
