-- fair, renew: the watchdog, every lease/3 while the work runs, as reentrant-watchdog's. The
-- queue needs none: a waiter keeps its place by coming back for it.
-- KEYS[1] the lock (a hash); ARGV[1] this holder's unique value, ARGV[2] the lease in ms.
-- Answers 1 renewed, 0 gone or someone else's (renewing stops).
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
