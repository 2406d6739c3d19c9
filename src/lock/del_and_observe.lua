-- The naive release: delete the lock whoever holds it (exactly what DEL does), but return the
-- value deleted, so the caller can record a release of someone else's lock.
-- KEYS[1] lock; ARGV[1] release channel
-- Returns the deleted value, or nil when there was no lock.
local deleted = redis.call('GETDEL', KEYS[1])
if not deleted then
  return nil
end
-- The message names whose lock went (see lua_release.lua).
redis.call('PUBLISH', ARGV[1], deleted)
return deleted
