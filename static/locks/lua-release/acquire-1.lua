-- lua-release, acquire: SET NX PX, the lock and its lease in one command.
-- KEYS[1] the lock; ARGV[1] this holder's unique value, ARGV[2] the lease in ms.
-- Answers 1 taken; {0, lease left in ms} busy (-2: just released, -1: no lease).
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return {0, redis.call('PTTL', KEYS[1])}
