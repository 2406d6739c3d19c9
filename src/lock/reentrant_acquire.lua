-- Reentrant acquire on a hash owner -> hold count (Redisson's layout).
-- KEYS[1] lock hash, KEYS[2] fencing-token counter
-- ARGV[1] lease ms, ARGV[2] owner, ARGV[3] '1' to take a fencing token on a fresh acquire
-- Returns {depth, fence} when held (depth 1 = fresh, 2+ = re-entered),
--         {0, pttl} when another owner holds it.
if redis.call('EXISTS', KEYS[1]) == 0 then
  local fence = 0
  if ARGV[3] == '1' then
    fence = redis.call('INCR', KEYS[2])
    redis.call('HSET', KEYS[1], '__fence', fence)
  end
  redis.call('HSET', KEYS[1], ARGV[2], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return {1, fence}
end
if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 then
  local depth = redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return {depth, tonumber(redis.call('HGET', KEYS[1], '__fence') or '0')}
end
return {0, redis.call('PTTL', KEYS[1])}
