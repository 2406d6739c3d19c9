-- fenced, acquire: reentrant-watchdog's hash owner -> hold count, and a fencing token. A
-- fresh hold takes the next number of a counter that only grows (INCR) and keeps it in the
-- hash beside the owner; the stock refuses a read or write with a token below one it has
-- seen, so a holder that outlived its lease is stopped there.
-- KEYS[1] the lock (a hash), KEYS[2] the fencing-token counter; ARGV[1] this holder's unique
-- value, ARGV[2] the lease in ms.
-- Answers {depth, token} held (depth 1: fresh, 2 or more: re-entered, with the fresh hold's
-- token); {0, lease left in ms} busy.
if redis.call('EXISTS', KEYS[1]) == 0 then
  local token = redis.call('INCR', KEYS[2])
  -- The owner first: the hash's first field is whose lock it is.
  redis.call('HSET', KEYS[1], ARGV[1], 1)
  redis.call('HSET', KEYS[1], '__token', token)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, token}
end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  local depth = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {depth, tonumber(redis.call('HGET', KEYS[1], '__token'))}
end
return {0, redis.call('PTTL', KEYS[1])}
