-- A keyword's open count (the hash 'open': lease -> its requests queued or held, not yet settled), as
-- push, pop and ack keep it. A Redis script cannot call another: the queue puts this text at the head
-- of each (farm.crawl.backends.redis.calls, OPEN_COUNT).
local function tally(counts, order, lease)  -- one request more of lease; order lists each lease once
  if not counts[lease] then
    counts[lease] = 0
    order[#order + 1] = lease
  end
  counts[lease] = counts[lease] + 1
end
local function settle(key, counts, order)  -- counts[lease] requests of each lease settled: what is left open
  local left = {}
  for _, lease in ipairs(order) do
    left[lease] = redis.call('HINCRBY', key, lease, -counts[lease])
    if left[lease] <= 0 then redis.call('HDEL', key, lease) end
  end
  return left
end
