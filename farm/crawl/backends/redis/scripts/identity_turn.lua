-- One identity's next turn at a site, for the worker that asks: every worker's requests through one
-- identity (a proxy) are spaced by its pace, as one worker's would be.
-- KEYS: 1 turns (hash: identity -> when its next turn begins, ms of Redis' clock), 2 learned (hash:
--       identity -> its learned pace, thousandths of a request a second)
-- ARGV: 1 identity (a proxy's id, a hash: no credentials in Redis), 2 its gap (ms), 3 jitter in [0, 1)
-- Returns {ms until the turn taken begins (0: now), the identity's learned pace or ''}; the identity's
-- next turn is a jittered gap after the one taken.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local turn = math.max(now, tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or 0))
redis.call('HSET', KEYS[1], ARGV[1], turn + math.floor(tonumber(ARGV[2]) * (0.5 + tonumber(ARGV[3]))))
redis.call('PEXPIRE', KEYS[1], 3600000)  -- turns a day-old crawl left mean nothing
return {turn - now, redis.call('HGET', KEYS[2], ARGV[1]) or ''}
