-- Redisson's lock: a hash owner -> hold count. Free, or already mine: count one more hold
-- and (re)start the lease. Busy: say how long the lease has left.
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return {0, redis.call('PTTL', KEYS[1])}
