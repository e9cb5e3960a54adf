-- Request ids of this state (the hash 'ids': gen, n). An id is the state's generation and a counter
-- ('<gen>-<n>'): Redis that lost its state (a flush, a restart from an older snapshot) counts again from 1,
-- and a worker's acknowledgement of a request taken before (its id of the lost state) would settle another
-- request that came to hold the same number. The generation (Redis' clock, in microseconds, when the state
-- made its first id) keeps the ids of two states apart. A request's queue score takes the counter alone.
-- A Redis script cannot call another: the queue puts this text at the head of each that makes ids
-- (farm.crawl.backends.redis.calls, NEW_IDS).
local function new_ids(key, count)  -- count new ids: the generation, and the counter before them
  local gen = redis.call('HGET', key, 'gen')
  if not gen then
    local time = redis.call('TIME')
    gen = time[1] .. string.format('%06d', tonumber(time[2]))
    redis.call('HSET', key, 'gen', gen)
  end
  return gen, redis.call('HINCRBY', key, 'n', count) - count
end
