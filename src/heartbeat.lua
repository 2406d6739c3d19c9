-- An instance says it is alive: score = Redis' clock in ms, so every instance shares one clock.
-- KEYS[1] the instance registry (sorted set); ARGV[1] instance id
-- Entries silent for ten minutes are dropped, so the set stays small.
local t = redis.call('TIME')
local now_ms = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZADD', KEYS[1], now_ms, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms - 600000)
return now_ms
