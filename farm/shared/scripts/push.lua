-- Push requests, through the day's dupefilter; count them open for their keyword.
-- KEYS: 1 queue (zset id -> score), 2 payloads (hash id -> json), 3 seq, 4 today's fingerprints (set),
--       5 open (hash lease -> requests not yet settled), 6 lease of (hash id -> lease), 7 ended leases (set)
-- ARGV: 1 fingerprint ttl (s), then per request: fingerprint ('' = not filtered), lease ('' = none),
--       priority, payload
-- Returns, per request, 1 when queued, 0 when filtered (seen today, or its keyword ended).
local queued = {}
for i = 2, #ARGV, 4 do
  local fingerprint, lease, priority, payload = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3]
  local ok = 1
  if lease ~= '' and redis.call('SISMEMBER', KEYS[7], lease) == 1 then ok = 0 end
  if ok == 1 and fingerprint ~= '' then ok = redis.call('SADD', KEYS[4], fingerprint) end
  if ok == 1 then
    local id = redis.call('INCR', KEYS[3])
    -- higher priority first, then first in first out
    redis.call('ZADD', KEYS[1], -priority * 1e12 + id, id)
    redis.call('HSET', KEYS[2], id, payload)
    if lease ~= '' then
      redis.call('HSET', KEYS[6], id, lease)
      redis.call('HINCRBY', KEYS[5], lease, 1)
    end
  end
  queued[#queued + 1] = ok
end
if redis.call('TTL', KEYS[4]) == -1 then redis.call('EXPIRE', KEYS[4], tonumber(ARGV[1])) end
return queued
