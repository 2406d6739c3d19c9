-- Compare-and-delete: remove the lock only if it still holds this holder's value.
-- KEYS[1] lock; ARGV[1] this holder's value, ARGV[2] release channel, ARGV[3] (optional) the
-- release message
-- Returns 1 if deleted, 0 if the lock was gone or someone else's.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  -- The message names this release (ARGV[3], or the holder): an instance that hears one
  -- release from several Redlock masters wakes one waiter for it, not one per master.
  redis.call('PUBLISH', ARGV[2], ARGV[3] or ARGV[1])
  return 1
end
return 0
