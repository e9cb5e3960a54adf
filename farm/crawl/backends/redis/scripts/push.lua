-- Push requests, through the dupefilter; count them open for their keyword.
-- KEYS: 1 queue (zset id -> score), 2 payloads (hash id -> json), 3 seq, 4 today's fingerprints of requests
--       without a keyword (set), 5 open (hash lease -> requests not yet settled), 6 lease of (hash id -> lease),
--       7 ends (zset lease -> until, ms)
-- ARGV: 1 today's fingerprints' ttl (s), 2 a lease's fingerprints' ttl (s), 3 the key of a lease's
--       fingerprints without the lease, then per request: fingerprint ('' = not filtered), lease ('' = none),
--       priority, payload
-- A keyword's page fingerprints are its lease's own set (seen:<lease>), whatever the day: a keyword in
-- flight at midnight keeps them, and every worker that learns of a page queues it once.
-- Returns, per request, 1 when queued, 0 when filtered (seen, or its keyword ended).
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local queued, sets = {}, {}
for i = 4, #ARGV, 4 do
  local fingerprint, lease, priority, payload = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3]
  local ok = 1
  if lease ~= '' and tonumber(redis.call('ZSCORE', KEYS[7], lease) or 0) > now then ok = 0 end
  if ok == 1 and fingerprint ~= '' then
    local set = KEYS[4]
    if lease ~= '' then set = ARGV[3] .. lease end
    ok = redis.call('SADD', set, fingerprint)
    sets[set] = true
  end
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
for set in pairs(sets) do
  if set == KEYS[4] then
    if redis.call('TTL', set) == -1 then redis.call('EXPIRE', set, tonumber(ARGV[1])) end
  else
    redis.call('EXPIRE', set, tonumber(ARGV[2]))  -- a day after its keyword's last page was queued
  end
end
return queued
