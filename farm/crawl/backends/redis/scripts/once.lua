-- A call whose reply can be lost (Redis stalled past the socket timeout, a reset, a failover) is made
-- again under the same call id: it answers what it answered the first time, without running twice.
-- The script below is the call's own (its KEYS and ARGV follow these).
-- KEYS: 1 this worker's calls (hash call id -> reply as JSON), then the script's
-- ARGV: 1 call id, 2 how long the calls are kept (ms), 3 and 4 the first and last call ids it forgets
--       ('' '': none this call; the worker forgets its old calls a run at a time), 5 '1' when the call is
--       made for the first time (no reply of it can be kept: it is not looked for), then the script's
local calls, call = KEYS[1], ARGV[1]
if ARGV[5] ~= '1' then
  local done = redis.call('HGET', calls, call)
  if done then return cjson.decode(done) end
end
local function script(KEYS, ARGV)
--SCRIPT--
end
local keys, argv = {}, {}
for i = 2, #KEYS do keys[i - 1] = KEYS[i] end
for i = 6, #ARGV do argv[i - 5] = ARGV[i] end
local reply = script(keys, argv)
redis.call('HSET', calls, call, cjson.encode(reply))
if ARGV[3] ~= '' then
  local old = {}
  for id = tonumber(ARGV[3]), tonumber(ARGV[4]) do old[#old + 1] = id end
  redis.call('HDEL', calls, unpack(old))
  redis.call('PEXPIRE', calls, tonumber(ARGV[2]))
end
return reply
