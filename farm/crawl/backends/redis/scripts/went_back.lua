-- Did Redis go back in time? The shared state names the server it is written on (its run_id). Another
-- server holding it (Redis restarted from an older snapshot, or a replica promoted in its place) holds
-- the state of some moment past: requests settled since, in-flight sets of requests acknowledged since,
-- ends and claims missing, an epoch every worker knows. That state is dropped, as a flush would drop it,
-- and the workers rebuild the queue from the keyword table (their heartbeat finds the epoch gone). The
-- site's pace and the proxies' quarantines stay: older, they are only the more careful.
-- KEYS: 1 the server the state is written on
-- ARGV: 1 a pattern that matches every key of the site, 2 the pace, 3 the prefix of the proxies' keys
-- Returns 1 when it dropped the state, 0 else (the same server, or no state written on any server yet).
local run_id = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
local known = redis.call('GET', KEYS[1])
if known == run_id then return 0 end
redis.call('SET', KEYS[1], run_id)
if not known then return 0 end
local cursor = '0'
repeat
  local reply = redis.call('SCAN', cursor, 'MATCH', ARGV[1], 'COUNT', 1000)
  cursor = reply[1]
  for _, key in ipairs(reply[2]) do
    if key ~= KEYS[1] and key ~= ARGV[2] and string.sub(key, 1, #ARGV[3]) ~= ARGV[3] then
      redis.call('UNLINK', key)
    end
  end
until cursor == '0'
return 1
