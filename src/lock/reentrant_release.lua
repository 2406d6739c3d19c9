-- Reentrant release: count one hold down; the last one deletes the lock and wakes waiters.
-- KEYS[1] lock hash; ARGV[1] lease ms, ARGV[2] owner, ARGV[3] release channel
-- Returns the holds left, or -1 if this owner no longer holds the lock (its lease expired).
if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 0 then
  return -1
end
local depth = redis.call('HINCRBY', KEYS[1], ARGV[2], -1)
if depth > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return depth
end
redis.call('DEL', KEYS[1])
-- The message names whose lock went (see lua_release.lua).
redis.call('PUBLISH', ARGV[3], ARGV[2])
return 0
