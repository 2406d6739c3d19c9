-- Claim an armed fault, once: the first instance to reach the fault point wins it.
-- KEYS[1] the room's fault hash (field = kind, value = '<instance or *>|<ms>|<nodes>'),
-- KEYS[2] the room's pending-strike mark, KEYS[3] the lock timeline, KEYS[4] the stock
-- ARGV[1] kind, ARGV[2] claiming instance, ARGV[3] control channel, ARGV[4] reload message,
-- ARGV[5] how long to mark a lock-store fault pending (ms), or '' for other faults
-- Returns the stored value when claimed, nil otherwise.
local value = redis.call('HGET', KEYS[1], ARGV[1])
if not value then
  return nil
end
local target = string.match(value, '^([^|]*)|')
if target ~= '*' and target ~= ARGV[2] then
  return nil
end
redis.call('HDEL', KEYS[1], ARGV[1])
-- In the same step as the claim, so no other buyer can look between the two.
if ARGV[5] ~= '' then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[5])
end
-- The claim is the strike: mark it on the timeline, stamped with Redis' clock, so a run's
-- history draws the fault where it struck. The mark lives as long as the stock, as every
-- timeline entry does.
local t = redis.call('TIME')
redis.call('XADD', KEYS[3], 'MAXLEN', '~', 5000, '*', 'kind', 'fault', 'fault', ARGV[1],
  'instance', ARGV[2], 'armed', value, 'at_us', t[1] .. string.rep('0', 6 - #t[2]) .. t[2])
local ttl = redis.call('PTTL', KEYS[4])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[3], ttl)
end
-- Tell every instance the fault is spent, so they stop checking for it.
redis.call('PUBLISH', ARGV[3], ARGV[4])
return value
