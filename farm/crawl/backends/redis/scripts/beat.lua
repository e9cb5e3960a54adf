-- A worker's heartbeat, in one call: it is alive (Redis' clock); the shared state's epoch (missing: Redis
-- lost everything); its inbox (ends of its keywords other workers wrote, and notes to look at one);
-- on a maintenance beat, the workers silent for the timeout put back and their keywords adopted
-- (scripts/requeue_dead.lua); whether any work is left (scripts/busy.lua), when the worker asks (one
-- that holds keywords does not end: it only needs the live workers).
-- KEYS: 1 this worker's calls (see once.lua), 2 live workers, 3 epoch, 4 its inbox (list), 5 queue
-- ARGV: 1 call id, 2 how long the calls are kept (ms), 3 and 4 the first and last call ids it forgets,
--       5 '1' when the call is made for the first time, 6 this worker, 7 '1' on a maintenance beat,
--       8 the timeout (ms), 9 key prefix (the site's), 10 at most this many inbox entries, 11 '1' to
--       look whether any work is left
-- Returns {now (ms), epoch ('' none), {inbox entry, ...}, requests put back, {lease adopted, ...},
-- {worker to look up, ...}, busy (1 | 0; 1 when not looked at), {live worker, ...}}. Made again under the same call id (its
-- reply lost), it answers as it did: what it read from the inbox and adopted is kept.
local function requeue_dead(KEYS, ARGV)
--REQUEUE_DEAD--
end
local function busy(KEYS, ARGV)
--BUSY--
end
local calls, call = KEYS[1], ARGV[1]
if ARGV[5] ~= '1' then
  local done = redis.call('HGET', calls, call)
  if done then return cjson.decode(done) end
end
local me, prefix = ARGV[6], ARGV[9]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZADD', KEYS[2], now, me)
local epoch = redis.call('GET', KEYS[3]) or ''
local inbox = redis.call('LPOP', KEYS[4], tonumber(ARGV[10])) or {}
local dead = {0, {}, {}}
if ARGV[7] == '1' then dead = requeue_dead({KEYS[2], KEYS[5]}, {ARGV[8], me, prefix, now}) end
local work
if ARGV[11] == '1' then
  work = busy({KEYS[2], KEYS[5]}, {me, prefix})
else
  work = {1, redis.call('ZRANGE', KEYS[2], 0, -1)}
end
local reply = {now, epoch, inbox, dead[1], dead[2], dead[3], work[1], work[2]}
if #inbox > 0 or dead[1] > 0 or #dead[2] > 0 or #dead[3] > 0 then
  redis.call('HSET', calls, call, cjson.encode(reply))
end
if ARGV[3] ~= '' then
  local old = {}
  for id = tonumber(ARGV[3]), tonumber(ARGV[4]) do old[#old + 1] = id end
  redis.call('HDEL', calls, unpack(old))
  redis.call('PEXPIRE', calls, tonumber(ARGV[2]))
end
return reply
