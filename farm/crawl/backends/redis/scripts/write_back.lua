-- Redis lost its state (flushed, or went back in time): this worker writes back the requests it holds
-- (taken from the queue before, not settled since) into its in-flight set, each counted open for its
-- keyword and its page among the keyword's fingerprints. The rebuild then queues none of them again,
-- and while this worker beats, none goes back in the queue.
-- KEYS: 1 this worker's in-flight (zset id -> score), 2 payloads, 3 ids (scripts/ids.lua), 4 open,
--       5 the workers that wrote back since the state was lost (set)
-- ARGV: 1 the key of a lease's fingerprints without the lease, 2 their ttl (s), 3 this worker, then per
--       request: its id, lease, fingerprint, priority, payload
-- Returns the requests' ids, in order: the same for one taken since the state was lost (already held),
-- a new one for the others.
local out, opened, opens = {}, {}, {}
for i = 4, #ARGV, 5 do
  local id, lease, fingerprint, priority, payload = ARGV[i], ARGV[i + 1], ARGV[i + 2], tonumber(ARGV[i + 3]), ARGV[i + 4]
  local entry = lease .. '\n' .. payload
  -- held already: taken since the state was lost, under this id (an id of the lost state names none in
  -- the new one: scripts/ids.lua)
  if not (redis.call('ZSCORE', KEYS[1], id) and redis.call('HGET', KEYS[2], id) == entry) then
    local gen, n = new_ids(KEYS[3], 1)
    id = gen .. '-' .. (n + 1)
    redis.call('ZADD', KEYS[1], -priority * 1e12 + n + 1, id)
    redis.call('HSET', KEYS[2], id, entry)
    redis.call('SADD', ARGV[1] .. lease, fingerprint)
    redis.call('EXPIRE', ARGV[1] .. lease, tonumber(ARGV[2]))
    tally(opened, opens, lease)
  end
  out[#out + 1] = id
end
for _, lease in ipairs(opens) do redis.call('HINCRBY', KEYS[4], lease, opened[lease]) end
redis.call('SADD', KEYS[5], ARGV[3])
return out
