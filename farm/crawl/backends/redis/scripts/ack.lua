-- A request's page is settled (recorded, or given up): it leaves this worker's in-flight set.
-- KEYS: 1 this worker's in-flight, 2 payloads (hash id -> [lease "\n"] json), 3 open
-- ARGV: ids
-- Each command takes the whole batch (one ZMSCORE, ZREM, HMGET, HDEL; one HINCRBY a keyword).
-- Returns {lease, requests of it still open, ...} for each acknowledged request that had a lease, in
-- order, as if acknowledged one by one.
local function batch(command, key, list)  -- unpack has a limit: the replies of runs of 4000
  local out = {}
  for i = 1, #list, 4000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 3999, #list)))
    if type(reply) == 'table' then
      for j = 1, math.min(4000, #list - i + 1) do out[i + j - 1] = reply[j] end
    end
  end
  return out
end
local held = batch('ZMSCORE', KEYS[1], ARGV)
local ids = {}
for i = 1, #ARGV do
  if held[i] then ids[#ids + 1] = ARGV[i] end
end
if #ids == 0 then return {} end
batch('ZREM', KEYS[1], ids)
local entries = batch('HMGET', KEYS[2], ids)
batch('HDEL', KEYS[2], ids)
local leases, count, order = {}, {}, {}
for i = 1, #ids do
  local lease = entries[i] and string.match(entries[i], '^(%d+:%d+)\n')
  if lease then
    leases[#leases + 1] = lease
    tally(count, order, lease)
  end
end
local left = settle(KEYS[3], count, order)
for _, lease in ipairs(order) do left[lease] = left[lease] + count[lease] end  -- before this batch: each ack below takes one off
local out = {}
for _, lease in ipairs(leases) do
  left[lease] = left[lease] - 1
  out[#out + 1] = lease
  out[#out + 1] = left[lease]
end
return out
