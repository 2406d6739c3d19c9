-- Gives a room a new token and join code (their SHA-256), or none: the old token, the old
-- code and every session the old code was exchanged for stop working in the same step, on
-- every instance, since every instance looks tokens up here on each admin request.
-- KEYS[1] token digest -> room; KEYS[2] room -> token digest
-- KEYS[3] code digest -> room; KEYS[4] room -> code digest; KEYS[5] room -> session digests
-- ARGV[1] room; ARGV[2] the new token's digest, or '' to revoke; ARGV[3] the new code's
-- digest, or ''
-- Returns 1 when the room had a token before.
local old = redis.call('HGET', KEYS[2], ARGV[1])
if old then
  redis.call('HDEL', KEYS[1], old)
end
local old_code = redis.call('HGET', KEYS[4], ARGV[1])
if old_code then
  redis.call('HDEL', KEYS[3], old_code)
end
local sessions = redis.call('HGET', KEYS[5], ARGV[1])
if sessions then
  for session in string.gmatch(sessions, '%S+') do
    redis.call('HDEL', KEYS[1], session)
  end
  redis.call('HDEL', KEYS[5], ARGV[1])
end
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[2], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[4], ARGV[1])
else
  redis.call('HSET', KEYS[3], ARGV[3], ARGV[1])
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
end
if old then return 1 end
return 0
