-- uuid-owner, release step 1: the check. Is the lock still mine? Step 2, the delete, runs
-- only if it is.
-- KEYS[1] the lock; ARGV[1] this holder's unique value.
-- Answers 1 mine (go on to step 2), 0 gone or someone else's (stop).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return 1
end
return 0
