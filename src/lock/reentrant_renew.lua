-- Watchdog renewal: push the lease out again, only while this owner still holds the lock.
-- KEYS[1] lock hash; ARGV[1] lease ms, ARGV[2] owner
-- Returns 1 if renewed, 0 if the lock is gone or someone else's.
if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return 1
end
return 0
