-- Give every key of a room the full TTL again and renew its registration. Creates nothing:
-- PEXPIRE skips missing keys, ZADD XX an unregistered room.
-- KEYS[1] the rooms sorted set, KEYS[2] the store epoch, KEYS[3] the room's stock,
-- KEYS[4..] the room's other keys
-- ARGV[1] room, ARGV[2] TTL ms
-- Returns {1 if the stock exists else 0, the store epoch or ''}.
local ttl = tonumber(ARGV[2])
for i = 3, #KEYS do
  redis.call('PEXPIRE', KEYS[i], ttl)
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', now + ttl, ARGV[1])
return {redis.call('EXISTS', KEYS[3]), redis.call('GET', KEYS[2]) or ''}
