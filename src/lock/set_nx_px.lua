-- The atomic take-with-lease (`SET lock owner NX PX lease`), as one script so that a sale's
-- read can ride behind it in the same round trip (lock/riding.rs); the tiers' own acquire
-- sends the command itself (lock/mod.rs, set_nx_px).
-- KEYS[1] lock; ARGV[1] owner, ARGV[2] lease ms
-- Returns {1, 0} when taken, {0, lease left in ms} when someone holds it (-2: just gone,
-- -1: no lease).
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, 0}
end
return {0, redis.call('PTTL', KEYS[1])}
