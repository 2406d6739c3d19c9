-- Give every key of a room the full TTL again. Creates nothing: PEXPIRE skips missing keys.
-- Touches the room's keys only (one hash slot): the registry's renewal is a command of its own
-- on the fleet's keys (src/rooms.rs), which may live on another master of a Redis Cluster.
-- KEYS[1] the room's stock, KEYS[2..] the room's other keys
-- ARGV[1] TTL ms
-- Returns 1 if the stock exists, else 0.
local ttl = tonumber(ARGV[1])
for i = 1, #KEYS do
  redis.call('PEXPIRE', KEYS[i], ttl)
end
return redis.call('EXISTS', KEYS[1])
