-- reentrant-watchdog, acquire: Redisson's lock, a hash owner -> hold count. Free, or already
-- mine: one hold more, and the lease starts over.
-- KEYS[1] the lock (a hash); ARGV[1] this holder's unique value, ARGV[2] the lease in ms.
-- Answers {depth, 0} held (depth 1: fresh, 2 or more: re-entered; no fencing token);
-- {0, lease left in ms} busy.
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  local depth = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {depth, 0}
end
return {0, redis.call('PTTL', KEYS[1])}
