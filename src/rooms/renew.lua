-- Renew a room's registration. Creates nothing: ZADD XX skips an unregistered room.
-- Touches the fleet's keys only (one hash slot); the room's own keys are renewed by
-- src/rooms/touch.lua, in their slot.
-- KEYS[1] the rooms sorted set (room -> expiry ms), KEYS[2] the store epoch
-- ARGV[1] room, ARGV[2] TTL ms
-- Returns the store epoch, or ''.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
return redis.call('GET', KEYS[2]) or ''
