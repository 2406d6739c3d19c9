-- Compare-and-delete: remove the lock only if it still holds this holder's value.
-- KEYS[1] lock; ARGV[1] this holder's value, ARGV[2] release channel
-- Returns 1 if deleted, 0 if the lock was gone or someone else's.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  -- The message names whose lock went.
  redis.call('PUBLISH', ARGV[2], ARGV[1])
  return 1
end
return 0
