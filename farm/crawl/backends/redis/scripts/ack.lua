-- A request's page is settled (recorded, or given up): it leaves this worker's in-flight set.
-- KEYS: 1 this worker's in-flight, 2 payloads, 3 lease of, 4 open
-- ARGV: ids
-- Returns {lease, requests of it still open, ...} for each acknowledged request that had a lease.
local out = {}
for i = 1, #ARGV do
  local id = ARGV[i]
  if redis.call('ZREM', KEYS[1], id) == 1 then
    local lease = redis.call('HGET', KEYS[3], id)
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[3], id)
    if lease then
      local left = redis.call('HINCRBY', KEYS[4], lease, -1)
      if left <= 0 then redis.call('HDEL', KEYS[4], lease) end
      out[#out + 1] = lease
      out[#out + 1] = left
    end
  end
end
return out
