-- Push requests, through the dupefilter; count them open for their keyword.
-- KEYS: 1 queue (zset id -> score), 2 payloads (hash id -> [lease "\n"] json), 3 seq, 4 today's
--       fingerprints of requests without a keyword (set), 5 open (hash lease -> requests not yet settled),
--       6 ends (zset lease -> until, ms), 7 epoch
-- ARGV: 1 today's fingerprints' ttl (s), 2 a lease's fingerprints' ttl (s), 3 the key of a lease's
--       fingerprints without the lease, 4 the epoch the pusher knows ('' = any), then per request:
--       fingerprint ('' = not filtered), lease ('' = none), priority, payload
-- Under another epoch (Redis lost its state since the pusher last looked), nothing is queued: until the
-- queue is rebuilt, the pages other workers hold are not all written back, and one could be queued again.
-- A keyword's page fingerprints are its lease's own set (seen:<lease>), whatever the day: a keyword in
-- flight at midnight keeps them, and every worker that learns of a page queues it once.
-- Each command takes the whole batch (one ZADD, one HSET, one SADD a set...), not one request.
-- Returns, per request, 1 when queued, 0 when filtered (seen, or its keyword ended); {} under another epoch.
local function chunked(command, key, list)  -- unpack has a limit: a rebuild pushes thousands
  for i = 1, #list, 4000 do redis.call(command, key, unpack(list, i, math.min(i + 3999, #list))) end
end
if ARGV[4] ~= '' and redis.call('GET', KEYS[7]) ~= ARGV[4] then return {} end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local n = (#ARGV - 4) / 4
local ok, leases, ended = {}, {}, {}
for i = 1, n do
  local lease = ARGV[i * 4 + 2]
  if lease ~= '' and ended[lease] == nil then
    ended[lease] = false
    leases[#leases + 1] = lease
  end
end
for j = 1, #leases, 4000 do
  local part = {unpack(leases, j, math.min(j + 3999, #leases))}
  local untils = redis.call('ZMSCORE', KEYS[6], unpack(part))
  for k, lease in ipairs(part) do ended[lease] = untils[k] and tonumber(untils[k]) > now or false end
end
-- the fingerprints, a set at a time: which are new (SMISMEMBER), then all of those in one SADD
local sets, order = {}, {}
for i = 1, n do
  local fingerprint, lease = ARGV[i * 4 + 1], ARGV[i * 4 + 2]
  ok[i] = 1
  if lease ~= '' and ended[lease] then ok[i] = 0 end
  if ok[i] == 1 and fingerprint ~= '' then
    local set = KEYS[4]
    if lease ~= '' then set = ARGV[3] .. lease end
    if not sets[set] then
      sets[set] = {}
      order[#order + 1] = set
    end
    table.insert(sets[set], i)
  end
end
for _, set in ipairs(order) do
  local members, fresh, seen = sets[set], {}, {}
  local known = {}
  if #members == 1 then
    known[1] = 1 - redis.call('SADD', set, ARGV[members[1] * 4 + 1])
  else
    for j = 1, #members, 4000 do
      local part = {}
      for k = j, math.min(j + 3999, #members) do part[#part + 1] = ARGV[members[k] * 4 + 1] end
      for k, is in ipairs(redis.call('SMISMEMBER', set, unpack(part))) do known[j + k - 1] = is end
    end
  end
  for k, i in ipairs(members) do
    local fingerprint = ARGV[i * 4 + 1]
    if known[k] == 1 or seen[fingerprint] then
      ok[i] = 0
    else
      seen[fingerprint] = true
      fresh[#fresh + 1] = fingerprint
    end
  end
  if #members > 1 and #fresh > 0 then chunked('SADD', set, fresh) end
  if set == KEYS[4] then
    if redis.call('TTL', set) == -1 then redis.call('EXPIRE', set, tonumber(ARGV[1])) end
  else
    redis.call('EXPIRE', set, tonumber(ARGV[2]))  -- a day after its keyword's last page was queued
  end
end
local count = 0
for i = 1, n do count = count + ok[i] end
if count > 0 then
  local id = redis.call('INCRBY', KEYS[3], count) - count
  local scores, payloads, opened, opens = {}, {}, {}, {}
  for i = 1, n do
    if ok[i] == 1 then
      id = id + 1
      local lease, priority, payload = ARGV[i * 4 + 2], tonumber(ARGV[i * 4 + 3]), ARGV[i * 4 + 4]
      -- higher priority first, then first in first out
      scores[#scores + 1] = -priority * 1e12 + id
      scores[#scores + 1] = id
      payloads[#payloads + 1] = id
      if lease ~= '' then
        payloads[#payloads + 1] = lease .. '\n' .. payload
        tally(opened, opens, lease)
      else
        payloads[#payloads + 1] = payload
      end
    end
  end
  chunked('ZADD', KEYS[1], scores)
  chunked('HSET', KEYS[2], payloads)
  for _, lease in ipairs(opens) do redis.call('HINCRBY', KEYS[5], lease, opened[lease]) end
end
return ok
