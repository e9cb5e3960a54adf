-- A worker's sends, in the order it made them, in one call: runs of pushes, acknowledgements, ends and
-- looks (farm.crawl.backends.redis.sends). Each command takes a whole run (one ZADD, HSET, ZMSCORE...).
-- KEYS: 1 this worker's calls (hash call id -> reply as JSON, see once.lua), 2 queue (zset id -> score),
--       3 payloads (hash id -> [lease "\n"] json), 4 ids (scripts/ids.lua), 5 today's fingerprints of
--       requests without a keyword (set), 6 open (hash lease -> requests not yet settled), 7 ends (zset
--       lease -> until, ms), 8 epoch, 9 this worker's in-flight (zset id -> score), 10 owners (hash lease -> worker)
-- ARGV: 1 call id, 2 how long the calls are kept (ms), 3 and 4 the first and last call ids it forgets
--       ('' ''), 5 '1' when the call is made for the first time, 6 the epoch the worker knows, 7 today's
--       fingerprints' ttl (s), 8 a lease's fingerprints' and an end's ttl (s), 9 the key of a lease's
--       fingerprints without the lease, 10 this worker, 11 key prefix (the site's), then each run:
--       its kind, how many, and their values:
--         push, requeue  fingerprint ('' = not filtered), lease ('' = none), priority, payload; a push is
--                        queued only under the worker's epoch, a rebuild's (requeue) under any
--         ack            id, lease ('' = not known to the worker: read from its payload), '1' when this
--                        worker owns the lease ('' not, or not known)
--         end            lease, outcome
--         look           lease
--         seen           lease, page: a page done (a rebuild's), seen among the lease's fingerprints
--         hold           the worker this one is done taking on ('' none), then leases this one claimed
--                        or adopted (owner: this worker): a survivor adopts them if it stops
-- Returns a reply per run: push {1 queued | 0 filtered (seen, or its keyword ended), ...}, or {} under
-- another epoch (Redis lost its state since the worker last looked: until the queue is rebuilt, a page
-- another worker holds could be queued again); ack {lease, requests of it still open, ...} as if
-- acknowledged one by one; end {owner ('' none), ...}; look {requests open, ...}; hold {}; seen {}.
-- Made again under the same call id (its reply lost), it answers as it did and queues or settles nothing
-- twice: a reply that cannot be found again is kept (pushes that queued, acknowledgements of ids whose
-- lease the worker did not give); the rest is answered anew, the same (an acknowledgement made again
-- settles nothing, and answers what its keywords have open now).
local calls, call = KEYS[1], ARGV[1]
if ARGV[5] ~= '1' then
  local done = redis.call('HGET', calls, call)
  if done then return cjson.decode(done) end
end
local epoch, day_ttl, lease_ttl, seen_key, me, prefix = ARGV[6], ARGV[7], tonumber(ARGV[8]), ARGV[9], ARGV[10], ARGV[11]
local keep = false  -- the reply is kept (see above)

local now
local function clock()  -- Redis' time (ms), read once, when needed
  if not now then
    local time = redis.call('TIME')
    now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  return now
end

local function tally(counts, order, lease, n)  -- n requests more of lease; order lists each lease once
  if not counts[lease] then
    counts[lease] = 0
    order[#order + 1] = lease
  end
  counts[lease] = counts[lease] + (n or 1)
end

local function chunked(command, key, list)  -- unpack has a limit: a rebuild pushes thousands
  local out = {}
  for i = 1, #list, 4000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 3999, #list)))
    if type(reply) == 'table' then
      for j = 1, math.min(4000, #list - i + 1) do out[i + j - 1] = reply[j] end
    end
  end
  return out
end

local function add_open(counts, order)
  -- counts[lease] requests more open for each lease (fewer when negative), one HINCRBY for a lease
  -- alone, else one HMGET and one HSET for them all; a lease left with none is deleted. What is left
  local left = {}
  if #order == 1 then
    left[order[1]] = redis.call('HINCRBY', KEYS[6], order[1], counts[order[1]])
  elseif #order > 1 then
    local open, write = chunked('HMGET', KEYS[6], order), {}
    for i, lease in ipairs(order) do
      left[lease] = (tonumber(open[i]) or 0) + counts[lease]
      if left[lease] > 0 then
        write[#write + 1] = lease
        write[#write + 1] = left[lease]
      end
    end
    if #write > 0 then chunked('HSET', KEYS[6], write) end
  end
  local none = {}
  for _, lease in ipairs(order) do
    if left[lease] <= 0 then none[#none + 1] = lease end
  end
  if #none > 0 then chunked('HDEL', KEYS[6], none) end
  return left, none
end

local held_now = {}  -- leases listed in this call (hold): just claimed, not ended
local function ended(leases)  -- lease -> whether it is known to have ended
  local out, asked = {}, {}
  for _, lease in ipairs(leases) do
    if not held_now[lease] then asked[#asked + 1] = lease end
  end
  if #asked == 0 then return out end
  local untils = chunked('ZMSCORE', KEYS[7], asked)
  for i, lease in ipairs(asked) do out[lease] = untils[i] and tonumber(untils[i]) > clock() or false end
  return out
end

local current_epoch  -- read once a call
local function epoch_is(known)
  if current_epoch == nil then current_epoch = redis.call('GET', KEYS[8]) end
  return current_epoch == known
end

local function push(values, known_epoch)
  if known_epoch ~= '' and not epoch_is(known_epoch) then return {} end
  local n, ok, leases, known = #values / 4, {}, {}, {}
  for i = 1, n do
    local lease = values[i * 4 - 2]
    if lease ~= '' and not known[lease] then
      known[lease] = true
      leases[#leases + 1] = lease
    end
  end
  local gone = ended(leases)
  -- the fingerprints, a set at a time: which are new (SMISMEMBER), then all of those in one SADD. A
  -- keyword's are its lease's own set, whatever the day: a keyword in flight at midnight keeps them
  local sets, order = {}, {}
  for i = 1, n do
    local fingerprint, lease = values[i * 4 - 3], values[i * 4 - 2]
    ok[i] = 1
    if lease ~= '' and gone[lease] then ok[i] = 0 end
    if ok[i] == 1 and fingerprint ~= '' then
      local set = KEYS[5]
      if lease ~= '' then set = seen_key .. lease end
      if not sets[set] then
        sets[set] = {}
        order[#order + 1] = set
      end
      table.insert(sets[set], i)
    end
  end
  for _, set in ipairs(order) do
    local members, fresh, seen, known = sets[set], {}, {}, {}
    if #members == 1 then
      known[1] = 1 - redis.call('SADD', set, values[members[1] * 4 - 3])
    else
      local asked = {}
      for k, i in ipairs(members) do asked[k] = values[i * 4 - 3] end
      known = chunked('SMISMEMBER', set, asked)
    end
    for k, i in ipairs(members) do
      local fingerprint = values[i * 4 - 3]
      if known[k] == 1 or seen[fingerprint] then
        ok[i] = 0
      else
        seen[fingerprint] = true
        fresh[#fresh + 1] = fingerprint
      end
    end
    if #members > 1 and #fresh > 0 then chunked('SADD', set, fresh) end
    if set ~= KEYS[5] then
      -- a page asked for anew on an occasion ('<page>:<occasion>', a stall look) is seen as the page too:
      -- a push of it made after, by a worker that did not know it was asked for again, queues nothing
      local pages = {}
      for _, i in ipairs(members) do
        local page = ok[i] == 1 and string.match(values[i * 4 - 3], '^([^:]+):')
        if page then pages[#pages + 1] = page end
      end
      if #pages > 0 then chunked('SADD', set, pages) end
    end
    if set == KEYS[5] then
      if redis.call('TTL', set) == -1 then redis.call('EXPIRE', set, tonumber(day_ttl)) end
    else
      redis.call('EXPIRE', set, lease_ttl)  -- a day after its keyword's last page was queued
    end
  end
  local count = 0
  for i = 1, n do count = count + ok[i] end
  if count == 0 then return ok end
  keep = true
  local gen, n_id = new_ids(KEYS[4], count)
  local scores, payloads, opened, opens = {}, {}, {}, {}
  for i = 1, n do
    if ok[i] == 1 then
      n_id = n_id + 1
      local id = gen .. '-' .. n_id
      local lease, priority, payload = values[i * 4 - 2], tonumber(values[i * 4 - 1]), values[i * 4]
      -- higher priority first, then first in first out
      scores[#scores + 1] = -priority * 1e12 + n_id
      scores[#scores + 1] = id
      payloads[#payloads + 1] = id
      if lease ~= '' then
        payloads[#payloads + 1] = lease .. '\n' .. payload
        tally(opened, opens, lease)
      else
        payloads[#payloads + 1] = payload
      end
    end
  end
  chunked('ZADD', KEYS[2], scores)
  chunked('HSET', KEYS[3], payloads)
  add_open(opened, opens)
  return ok
end

local function ack(values)
  -- a page settled (recorded, or given up): its request leaves this worker's in-flight set and the
  -- queue's payloads; its keyword has one request fewer open. A keyword another worker owns, left with
  -- nothing open, gets a note in its owner's inbox ('<lease> look'): its owner looks at it at once
  local ids, given, mine = {}, {}, {}
  for i = 1, #values, 3 do
    ids[#ids + 1] = values[i]
    given[#given + 1] = values[i + 1]
    if values[i + 2] == '1' then mine[values[i + 1]] = true end
  end
  local held = chunked('ZMSCORE', KEYS[9], ids)
  local taken, leases, unknown = {}, {}, {}
  for i = 1, #ids do
    if held[i] then
      taken[#taken + 1] = ids[i]
      leases[#taken] = given[i]
      if given[i] == '' then unknown[#unknown + 1] = #taken end
    end
  end
  local counts, order, asked, seen = {}, {}, {}, {}
  if #taken > 0 then
    chunked('ZREM', KEYS[9], taken)
    if #unknown > 0 then  -- the lease from the payload, as queued
      keep = true
      local list = {}
      for k, i in ipairs(unknown) do list[k] = taken[i] end
      local entries = chunked('HMGET', KEYS[3], list)
      for k, i in ipairs(unknown) do leases[i] = entries[k] and string.match(entries[k], '^(%d+:%d+)\n') or '' end
    end
    chunked('HDEL', KEYS[3], taken)
    for i = 1, #taken do
      if leases[i] ~= '' then tally(counts, order, leases[i]) end
    end
  end
  -- acknowledged before (this call made again, its reply lost): what its keyword has open now
  for i = 1, #ids do
    local lease = given[i]
    if not held[i] and lease ~= '' and not counts[lease] and not seen[lease] then
      seen[lease] = true
      asked[#asked + 1] = lease
    end
  end
  local settled = {}
  for _, lease in ipairs(order) do settled[lease] = -counts[lease] end
  local left, empty = add_open(settled, order)
  local out = {}
  for _, lease in ipairs(order) do left[lease] = left[lease] + counts[lease] end  -- before this run: each ack below takes one off
  for i = 1, #taken do
    local lease = leases[i]
    if lease ~= '' then
      left[lease] = left[lease] - 1
      out[#out + 1] = lease
      out[#out + 1] = left[lease]
    end
  end
  if #asked > 0 then
    local open = redis.call('HMGET', KEYS[6], unpack(asked))
    for i, lease in ipairs(asked) do
      out[#out + 1] = lease
      out[#out + 1] = tonumber(open[i]) or 0
    end
  end
  local others = {}  -- left with nothing open, owned by another worker (or not known to be this one's)
  for _, lease in ipairs(empty) do
    if not mine[lease] then others[#others + 1] = lease end
  end
  if #others > 0 then
    local owners = redis.call('HMGET', KEYS[10], unpack(others))
    for i, lease in ipairs(others) do
      local owner = owners[i]
      if owner and owner ~= me then redis.call('RPUSH', prefix .. ':inbox:' .. owner, lease .. ' look') end
    end
  end
  return out
end

local function finish(values)
  -- keywords' leases ended (completed, failed, blocked, released, lost), whichever worker ended them:
  -- their queued requests are dropped at the pop, and each owner (who claimed or adopted one) is told.
  -- Every end is kept as long (a day), the key as long as the end written last (the lapsed ones are
  -- trimmed by the workers' maintenance, scripts/requeue_dead.lua)
  local untils, leases, outcomes, owners = {}, {}, {}, {}
  local last = clock() + lease_ttl * 1000
  for i = 1, #values, 2 do
    leases[#leases + 1] = values[i]
    outcomes[#outcomes + 1] = values[i + 1]
    untils[#untils + 1] = last
    untils[#untils + 1] = values[i]
  end
  redis.call('ZADD', KEYS[7], 'GT', unpack(untils))
  redis.call('PEXPIREAT', KEYS[7], last)
  local found = redis.call('HMGET', KEYS[10], unpack(leases))
  for i = 1, #leases do owners[i] = found[i] or '' end
  local told, order, known = {}, {}, {}
  for i, lease in ipairs(leases) do
    local owner = owners[i]
    if owner ~= '' then
      known[#known + 1] = lease
      if owner ~= me then
        if not told[owner] then
          told[owner] = {}
          order[#order + 1] = owner
        end
        table.insert(told[owner], lease .. ' ' .. outcomes[i])
      end
    end
  end
  for _, owner in ipairs(order) do redis.call('RPUSH', prefix .. ':inbox:' .. owner, unpack(told[owner])) end
  if #known > 0 then redis.call('HDEL', KEYS[10], unpack(known)) end
  return owners
end

local function hold(values)
  local owners = {}
  for i = 2, #values do
    owners[#owners + 1] = values[i]
    owners[#owners + 1] = me
    held_now[values[i]] = true
  end
  if #owners > 0 then chunked('HSET', KEYS[10], owners) end
  if values[1] ~= '' then redis.call('SREM', prefix .. ':taking:' .. me, values[1]) end
  return {}
end

local function look(values)
  local open = redis.call('HMGET', KEYS[6], unpack(values))
  for i = 1, #values do open[i] = tonumber(open[i]) or 0 end
  return open
end

local function mark_seen(values)
  -- (lease, page) pairs of pages done, as a rebuild reads them in the keyword table: seen, so that no push
  -- queues them again (a worker handling another's keyword asks for all its pages, and the fingerprints
  -- that kept the done ones out went with the state Redis lost)
  local sets, order = {}, {}
  for i = 1, #values, 2 do
    local set = seen_key .. values[i]
    if not sets[set] then
      sets[set] = {}
      order[#order + 1] = set
    end
    table.insert(sets[set], values[i + 1])
  end
  for _, set in ipairs(order) do
    chunked('SADD', set, sets[set])
    redis.call('EXPIRE', set, lease_ttl)
  end
  return {}
end

local replies, i = {}, 12
while i <= #ARGV do
  local kind, n = ARGV[i], tonumber(ARGV[i + 1])
  local width = 2
  if kind == 'push' or kind == 'requeue' then
    width = 4
  elseif kind == 'ack' then
    width = 3
  elseif kind == 'look' or kind == 'hold' then
    width = 1
  end
  local values = {}
  for j = i + 2, i + 1 + n * width do values[#values + 1] = ARGV[j] end
  i = i + 2 + n * width
  if kind == 'push' then
    replies[#replies + 1] = push(values, epoch)
  elseif kind == 'requeue' then
    replies[#replies + 1] = push(values, '')
  elseif kind == 'ack' then
    replies[#replies + 1] = ack(values)
  elseif kind == 'end' then
    replies[#replies + 1] = finish(values)
  elseif kind == 'hold' then
    replies[#replies + 1] = hold(values)
  elseif kind == 'seen' then
    replies[#replies + 1] = mark_seen(values)
  else
    replies[#replies + 1] = look(values)
  end
end
if keep then redis.call('HSET', calls, call, cjson.encode(replies)) end
if ARGV[3] ~= '' then
  local old = {}
  for id = tonumber(ARGV[3]), tonumber(ARGV[4]) do old[#old + 1] = id end
  redis.call('HDEL', calls, unpack(old))
  redis.call('PEXPIRE', calls, tonumber(ARGV[2]))
end
return replies
