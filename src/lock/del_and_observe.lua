-- The naive release: delete the lock whoever holds it (exactly what DEL does), but look at
-- the value deleted so the ground truth can count releases of someone else's lock.
-- KEYS[1] lock, KEYS[2] foreign-release counter, KEYS[3] timeline
-- ARGV[1] this holder's value, ARGV[2] release channel, ARGV[3] instance
-- Returns 1 if a foreign lock was deleted, else 0.
local deleted = redis.call('GETDEL', KEYS[1])
if not deleted then
  return 0
end
redis.call('PUBLISH', ARGV[2], 'released')
if deleted ~= ARGV[1] then
  redis.call('INCR', KEYS[2])
  local t = redis.call('TIME')
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', 5000, '*', 'kind', 'foreign_release',
    'instance', ARGV[3], 'owner', ARGV[1], 'victim', deleted,
    'at_us', t[1] .. string.rep('0', 6 - #t[2]) .. t[2])
  return 1
end
return 0
