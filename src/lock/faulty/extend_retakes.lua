-- The extend of redlock-rb (before its fix for #36) and of redis-semaphore's refresh (before
-- its fix for #175), for a lock whose key holds its owner's value: a new lease if the key
-- holds mine, and if it holds nothing at all, the key set to mine again. A lease that ran
-- out, and a lock some other holder took and gave back since, both pass for a lock held.
-- KEYS[1] the lock; ARGV[1] this holder's value, ARGV[2] the lease in ms.
-- Answers 1 extended (or taken again without a word), 0 someone else's.
local value = redis.call('GET', KEYS[1])
if value == false or value == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
