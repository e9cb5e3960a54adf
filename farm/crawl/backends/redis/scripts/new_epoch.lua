-- A rebuild's end, in one move: the keywords listed again under the workers that hold them, the new
-- epoch set, the lock released, the workers that wrote back what they held forgotten. Made again after
-- a lost reply, it writes the same.
-- KEYS: 1 epoch, 2 the rebuild lock, 3 owner (hash lease -> worker), 4 the workers that wrote back
-- ARGV: 1 the new epoch, then per lease: lease, worker
for i = 2, #ARGV, 8000 do
  redis.call('HSET', KEYS[3], unpack(ARGV, i, math.min(i + 7999, #ARGV)))
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2], KEYS[4])
return ARGV[1]
