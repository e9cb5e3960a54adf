-- This worker's inbox: ends of its leases that other workers wrote (read once: see once.lua).
-- KEYS: 1 its inbox (list)
-- ARGV: 1 at most this many
return redis.call('LPOP', KEYS[1], tonumber(ARGV[1])) or {}
