-- Take up to n requests for this worker, at the site's shared pace.
-- KEYS: 1 queue, 2 payloads (hash id -> [lease "\n"] json), 3 this worker's in-flight (zset id -> queue
--       score), 4 pace (hash), 5 ends (zset lease -> until, ms), 6 open, 7 this worker's calls (see once.lua)
-- ARGV: 1 n, 2 jitter in [0, 1), 3 the site's interval (ms; '' unknown), 4 this worker's back-off (ms),
--       5 call id, 6 how long the calls are kept (ms), 7 and 8 the first and last call ids it forgets,
--       9 '1' when the call is made for the first time
-- Returns {ms to wait} when the pace says wait, else {0, id, payload, id, payload, ...} (a payload
-- without its lease: the request carries it).
-- Made again under the same call id (its reply lost), it answers the requests that call took and
-- this worker still holds: a lost reply strands nothing in its in-flight set. Only their ids are kept.
-- Each command takes the whole batch (one ZPOPMIN, HMGET, ZMSCORE, ZADD), not one request; an empty
-- queue costs one command, and Redis' clock is read only when the pace or an end needs it. A worker
-- whose site has no pace of its own (interval and back-off 0) pops first and reads the shared pace
-- after: what another worker's back-off keeps from it goes back as it was.
local out = {0}
local function split(entry)  -- the lease, the request's JSON
  local lease = string.match(entry, '^(%d+:%d+)\n')
  if lease then return lease, string.sub(entry, #lease + 2) end
  return '', entry
end
if ARGV[9] ~= '1' then
  local done = redis.call('HGET', KEYS[7], ARGV[5])
  if done then
    local ids = {}
    for id in string.gmatch(done, '%S+') do ids[#ids + 1] = id end
    if #ids == 0 then return out end
    local entries = redis.call('HMGET', KEYS[2], unpack(ids))
    local held = redis.call('ZMSCORE', KEYS[3], unpack(ids))
    for i, id in ipairs(ids) do
      if entries[i] and held[i] then
        local _, payload = split(entries[i])
        out[#out + 1] = id
        out[#out + 1] = payload
      end
    end
    return out
  end
end
if ARGV[7] ~= '' then  -- this worker's old calls (see once.lua)
  local old = {}
  for id = tonumber(ARGV[7]), tonumber(ARGV[8]) do old[#old + 1] = id end
  redis.call('HDEL', KEYS[7], unpack(old))
  redis.call('PEXPIRE', KEYS[7], tonumber(ARGV[6]))
end
local n = tonumber(ARGV[1])
local first  -- popped before the pace was read
if ARGV[3] == '0' and ARGV[4] == '0' then
  first = redis.call('ZPOPMIN', KEYS[1], n)
  if #first == 0 then return out end
elseif redis.call('ZCARD', KEYS[1]) == 0 then
  return out  -- nothing to take (the pace waits for a request)
end
local function put_back(popped, from)  -- ZPOPMIN's (id, score) pairs from the from-th on, as they were
  local entries = {}
  for i = from, #popped, 2 do
    entries[#entries + 1] = popped[i + 1]
    entries[#entries + 1] = popped[i]
  end
  if #entries > 0 then redis.call('ZADD', KEYS[1], unpack(entries)) end
end
local now
local function clock()  -- Redis' time (ms), read once
  if not now then
    local time = redis.call('TIME')
    now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  return now
end
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
if next_at > 0 and clock() < next_at then
  if first then put_back(first, 1) end
  return {next_at - now}
end
local gap = math.max(tonumber(pace[2]) or 0, tonumber(pace[3]) or 0)
if gap > 0 then  -- a paced site: one request per turn
  n = 1
  if first then put_back(first, 3) end
end
local taken, held = {}, {}
while #taken < n do
  local wanted = n - #taken
  local top = first or redis.call('ZPOPMIN', KEYS[1], wanted)
  if first then
    top, first = {unpack(first, 1, math.min(#first, wanted * 2))}, nil
  end
  if #top == 0 then break end
  local ids = {}
  for i = 1, #top, 2 do ids[#ids + 1] = top[i] end
  local entries = redis.call('HMGET', KEYS[2], unpack(ids))
  local leases, ends, known = {}, {}, {}
  for i = 1, #ids do
    if entries[i] then
      local lease = split(entries[i])
      if lease ~= '' and not known[lease] then
        known[lease] = true
        leases[#leases + 1] = lease
      end
    end
  end
  if #leases > 0 then
    local untils = redis.call('ZMSCORE', KEYS[5], unpack(leases))
    for i, lease in ipairs(leases) do ends[lease] = untils[i] and tonumber(untils[i]) > clock() end
  end
  local dropped, closed, closing = {}, {}, {}
  for i, id in ipairs(ids) do
    if entries[i] then
      local lease, payload = split(entries[i])
      if ends[lease] then
        -- its keyword has ended: drop it here, not in a worker
        dropped[#dropped + 1] = id
        tally(closed, closing, lease)
      else
        held[#held + 1] = top[i * 2]
        held[#held + 1] = id
        out[#out + 1] = id
        out[#out + 1] = payload
        taken[#taken + 1] = id
      end
    end
  end
  if #dropped > 0 then redis.call('HDEL', KEYS[2], unpack(dropped)) end
  settle(KEYS[6], closed, closing)
  if #ids < wanted then break end  -- the queue is empty now
end
if #taken > 0 then
  redis.call('ZADD', KEYS[3], unpack(held))
  if gap > 0 then redis.call('HSET', KEYS[4], 'next_at', clock() + math.floor(gap * (0.5 + tonumber(ARGV[2])))) end
  redis.call('HSET', KEYS[7], ARGV[5], table.concat(taken, ' '))
end
return out
