-- Register a room before its first write, within the fleet's room limit.
-- KEYS[1] the rooms sorted set (room -> expiry ms), KEYS[2] the store epoch
-- ARGV[1] room, ARGV[2] max rooms, ARGV[3] TTL ms, ARGV[4] a fresh epoch id (used if none)
-- Returns {1, rooms} when the room is registered (new or renewed), {0, rooms} at the limit.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- Rooms whose time ran out are no longer counted (their keys expired with them).
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local count = redis.call('ZCARD', KEYS[1])
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and count >= tonumber(ARGV[2]) then
  return {0, count}
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
-- The store's identity, written once: a store that restarts empty loses it.
redis.call('SET', KEYS[2], ARGV[4], 'NX')
return {1, redis.call('ZCARD', KEYS[1])}
