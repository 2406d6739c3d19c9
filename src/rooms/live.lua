-- The rooms registered and live now, by the store's clock (as create.lua counts them).
-- KEYS[1] the rooms sorted set (room -> expiry ms). Returns the rooms' names.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')
