-- Watchdog renewal: push the lease out again, only while this owner still holds the lock.
-- KEYS[1] lock hash, KEYS[2] timeline; ARGV[1] lease ms, ARGV[2] owner, ARGV[3] instance
-- Returns 1 if renewed, 0 if the lock is gone or someone else's.
if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  local t = redis.call('TIME')
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', 5000, '*', 'kind', 'renew', 'instance', ARGV[3],
    'owner', ARGV[2], 'at_us', t[1] .. string.rep('0', 6 - #t[2]) .. t[2])
  return 1
end
return 0
