-- After Redis lost everything: take the lock under which one worker rebuilds the shared queue.
-- KEYS: 1 epoch, 2 the rebuild lock
-- ARGV: 1 this worker, 2 the lock's lifetime (s), 3 the prefix of a fresh epoch (made by a worker that
--       joined: nothing was rebuilt under it)
-- Returns 1 when this worker is to rebuild (taken again after a lost reply, the lock is its own), 0 when
-- another worker rebuilt it already (an epoch that is not fresh) or holds the lock.
local epoch = redis.call('GET', KEYS[1])
if epoch and string.sub(epoch, 1, #ARGV[3]) ~= ARGV[3] then return 0 end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'EX', tonumber(ARGV[2])) then return 1 end
if redis.call('GET', KEYS[2]) == ARGV[1] then return 1 end
return 0
