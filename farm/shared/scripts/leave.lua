-- A worker closes cleanly: what it had taken and not settled goes back in the queue; it is no longer
-- live. Nothing shared is deleted (scrapy-redis' close without SCHEDULER_PERSIST deletes everyone's).
-- KEYS: 1 live workers, 2 queue, 3 its in-flight set, 4 its inbox
-- ARGV: 1 the worker
local entries = redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES')
for i = 1, #entries, 2 do redis.call('ZADD', KEYS[2], entries[i + 1], entries[i]) end
redis.call('DEL', KEYS[3], KEYS[4])
redis.call('ZREM', KEYS[1], ARGV[1])
return #entries / 2
