-- A rebuild's end, in one move: the keywords listed again under the workers that hold them, the new
-- epoch set, the lock released, the workers that wrote back what they held forgotten. Made again after
-- a lost reply, it writes the same.
-- KEYS: 1 epoch, 2 the rebuild lock, 3 owner (hash lease -> worker), 4 the workers that wrote back
-- ARGV: 1 the new epoch, 2 the key of a worker's leases without the worker, then per lease: worker, lease
for i = 3, #ARGV, 2 do
  redis.call('SADD', ARGV[2] .. ARGV[i], ARGV[i + 1])
  redis.call('HSET', KEYS[3], ARGV[i + 1], ARGV[i])
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2], KEYS[4])
return ARGV[1]
