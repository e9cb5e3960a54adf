-- The site's shared pace after an answer: back off (a block, an outage) or ease (a good answer).
-- KEYS: 1 pace (hash: next_at ms, interval ms, penalty ms)
-- ARGV: 1 'back_off' | 'ease', 2 base ms, 3 max ms, 4 retry-after ms (0: none)
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local base, most = tonumber(ARGV[2]), tonumber(ARGV[3])
local penalty = tonumber(redis.call('HGET', KEYS[1], 'penalty')) or 0
if ARGV[1] == 'back_off' then
  penalty = math.min(most, math.max(base, penalty * 2))
  penalty = math.max(penalty, math.min(most, tonumber(ARGV[4])))
  local next_at = tonumber(redis.call('HGET', KEYS[1], 'next_at')) or 0
  redis.call('HSET', KEYS[1], 'penalty', penalty, 'next_at', math.max(next_at, now + penalty))
elseif penalty > 0 then
  penalty = penalty / 2
  if penalty < base / 2 then penalty = 0 end
  redis.call('HSET', KEYS[1], 'penalty', math.floor(penalty))
end
return math.floor(penalty)
