-- Run first by join.lua and turn.lua: a slot or a place whose instance stopped renewing it
-- (it died) lapses, here, before anyone looks at the line. Without it, a room whose only
-- driver died would look graded for ever to a press again, which then starts no driver.
-- KEYS as join.lua's first four. Leaves `now` (ms, Redis' clock) for the script after it.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for _, lapsed in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
  redis.call('ZREM', KEYS[2], lapsed)
  redis.call('HDEL', KEYS[4], lapsed)
end
for _, lapsed in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)) do
  redis.call('ZREM', KEYS[3], lapsed)
  redis.call('ZREM', KEYS[1], lapsed)
end
