-- fenced, renew: as reentrant-watchdog's, the watchdog, every lease/3 while the work runs.
-- Still mine? Then the lease starts over.
-- KEYS[1] the lock (a hash); ARGV[1] this holder's unique value, ARGV[2] the lease in ms.
-- Answers 1 renewed, 0 gone or someone else's (renewing stops).
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
