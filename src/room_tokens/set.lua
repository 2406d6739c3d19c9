-- Gives a room a new token (its SHA-256), or none: the old token stops working in the same
-- step, on every instance, since every instance looks tokens up here on each admin request.
-- KEYS[1] token digest -> room; KEYS[2] room -> token digest
-- ARGV[1] room; ARGV[2] the new digest, or '' to revoke
-- Returns 1 when the room had a token before.
local old = redis.call('HGET', KEYS[2], ARGV[1])
if old then
  redis.call('HDEL', KEYS[1], old)
end
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[2], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
end
if old then return 1 end
return 0
