-- Keep a run's history, and only the room's newest few.
-- KEYS[1] the room's histories (hash: run id -> JSON Lines), KEYS[2] their ids, newest first,
-- KEYS[3] the stock (the kept histories live as long as the room)
-- ARGV[1] run id, ARGV[2] the history, ARGV[3] how many runs a room keeps
-- Returns how many histories the room keeps now.
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('LREM', KEYS[2], 0, ARGV[1])
redis.call('LPUSH', KEYS[2], ARGV[1])
while redis.call('LLEN', KEYS[2]) > tonumber(ARGV[3]) do
  redis.call('HDEL', KEYS[1], redis.call('RPOP', KEYS[2]))
end
local ttl = redis.call('PTTL', KEYS[3])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return redis.call('LLEN', KEYS[2])
