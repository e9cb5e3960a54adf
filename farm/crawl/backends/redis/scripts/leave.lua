-- A worker closes cleanly: what it had taken and not settled goes back in the queue; it is no longer
-- live. Nothing shared is deleted (scrapy-redis' close without SCHEDULER_PERSIST deletes everyone's).
-- A stopped worker's keywords it was still taking on stay listed, and it stays in the live set with
-- its last heartbeat: a survivor finds it silent and takes them on.
-- KEYS: 1 live workers, 2 queue, 3 its in-flight set, 4 its inbox, 5 the workers it is taking on,
--       6 its calls (once.lua)
-- ARGV: 1 the worker
local entries = redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES')
for i = 1, #entries, 2 do redis.call('ZADD', KEYS[2], entries[i + 1], entries[i]) end
redis.call('DEL', KEYS[3], KEYS[4], KEYS[6])
redis.call('SREM', KEYS[5], ARGV[1])
if redis.call('SCARD', KEYS[5]) == 0 then redis.call('ZREM', KEYS[1], ARGV[1]) end
return #entries / 2
