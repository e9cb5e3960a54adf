-- The proxies quarantined now, each with the ms left: remaining time, not a timestamp, so that
-- workers whose clocks differ from Redis' (and from each other's) agree on when a quarantine ends.
-- KEYS: 1 quarantined (zset: proxy id -> until, ms of Redis' clock)
-- Returns: id1, ms left 1, id2, ms left 2, ...
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local out = {}
local rows = redis.call('ZRANGE', KEYS[1], '(' .. now, '+inf', 'BYSCORE', 'WITHSCORES')
for i = 1, #rows, 2 do
  out[#out + 1] = rows[i]
  out[#out + 1] = tonumber(rows[i + 1]) - now
end
return out
