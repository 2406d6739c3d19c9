-- The atomic take-with-lease (`SET lock owner NX PX lease`) of `lua-release`, as one script
-- that also answers the lease left when the lock is taken. As a script it can ride with a
-- sale's own scripts in one round trip (lock/riding.rs); `atomic-expiry` and `uuid-owner` send
-- the command itself, with `PTTL`, in a pipeline.
-- KEYS[1] lock; ARGV[1] owner, ARGV[2] lease ms
-- Returns {1, 0} when taken, {0, lease left in ms} when someone holds it (-2: just gone,
-- -1: no lease).
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, 0}
end
return {0, redis.call('PTTL', KEYS[1])}
