-- Enter the critical section: read the stock (the articles' GET), and note the overlap clock.
-- KEYS[1] stock, KEYS[2] exits, KEYS[3] highest fencing token seen, KEYS[4] stale counter
-- ARGV[1] this holder's fencing token, or '' for unfenced tiers
-- Returns {stock, exits so far, Redis time in us}, or {-1, 0, time} when the token is stale.
--
-- A fenced read also raises the highest token seen: once a newer holder has read the stock,
-- an older holder can no longer write a value based on its own, older read.
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
if ARGV[1] ~= '' then
  local seen = tonumber(redis.call('GET', KEYS[3]) or '0')
  if tonumber(ARGV[1]) < seen then
    redis.call('INCR', KEYS[4])
    return {-1, 0, now}
  end
  redis.call('SET', KEYS[3], ARGV[1])
end
local stock = tonumber(redis.call('GET', KEYS[1]) or '0')
local exits = tonumber(redis.call('GET', KEYS[2]) or '0')
return {stock, exits, now}
