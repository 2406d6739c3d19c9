-- A join code exchanged for a session of its room, counted against the client's address and
-- the whole fleet first: a guess over either limit is refused before the code is looked up.
-- KEYS[1] code digest -> room; KEYS[2] token digest -> room; KEYS[3] room -> session digests
-- KEYS[4] this address's attempts; KEYS[5] the fleet's attempts
-- ARGV[1] the code's digest; ARGV[2] the new session's digest; ARGV[3] attempts per address
-- a window; ARGV[4] attempts of the fleet a window; ARGV[5] the window, seconds; ARGV[6] the
-- most sessions a room keeps (the oldest goes)
-- Returns {'limited', seconds until the window ends}, {'unknown', 0} or {'joined', room}.
local function count(key)
  local n = redis.call('INCR', key)
  if n == 1 then
    redis.call('EXPIRE', key, ARGV[5])
  end
  return n
end
local function wait(key)
  local ttl = redis.call('TTL', key)
  if ttl < 1 then ttl = 1 end
  return {'limited', ttl}
end
-- An address over its own limit is not counted against the fleet: one flooding neighbour
-- cannot spend the class's budget.
if count(KEYS[4]) > tonumber(ARGV[3]) then
  return wait(KEYS[4])
end
if count(KEYS[5]) > tonumber(ARGV[4]) then
  return wait(KEYS[5])
end
local room = redis.call('HGET', KEYS[1], ARGV[1])
if not room then
  return {'unknown', 0}
end
redis.call('HSET', KEYS[2], ARGV[2], room)
local sessions = {}
for session in string.gmatch(redis.call('HGET', KEYS[3], room) or '', '%S+') do
  table.insert(sessions, session)
end
table.insert(sessions, ARGV[2])
while #sessions > tonumber(ARGV[6]) do
  redis.call('HDEL', KEYS[2], table.remove(sessions, 1))
end
redis.call('HSET', KEYS[3], room, table.concat(sessions, ' '))
return {'joined', room}
