-- Whose lock KEYS[1] is: a string lock's value, a hash lock's first field (its owner: the
-- ladder's hash locks write the owner first), '' for none. Sent just before and just after a
-- built-in tier's release step, in the same script (src/lock/send.rs), so the ground truth
-- sees what the release did to whose lock; a lab lock's wrapper does the same
-- (src/lab/step.lua).
-- KEYS[1] the lock.
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'string' then
  return redis.call('GET', KEYS[1])
elseif kind == 'hash' then
  return redis.call('HKEYS', KEYS[1])[1] or ''
end
return ''
