-- Stores a room's patched settings only if they are still what the patch was applied to, and
-- tells the fleet to reload the room. Two patches sent at once (a tier for every room beside a
-- student's lease change) would otherwise each write back what it read: one would be lost.
-- KEYS[1] the room's settings
-- ARGV[1] the settings the patch was applied to ('' when none were stored)
-- ARGV[2] the patched settings; ARGV[3] the control channel; ARGV[4] the reload message
-- Returns 1 when stored, 0 when someone changed them first (read again and re-apply).
local now = redis.call('GET', KEYS[1]) or ''
if now ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
