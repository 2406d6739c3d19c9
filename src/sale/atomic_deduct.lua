-- Lock-free sale: decrement if enough stock is left and record the order, in one step.
-- KEYS[1] stock, KEYS[2] ledger, KEYS[3] items sold, KEYS[4] timeline
-- ARGV[1] qty, ARGV[2] the order as a JSON object (Redis' clock times are appended),
-- ARGV[3] instance
-- Returns {1, stock left} when sold, {0, stock} when sold out; a NOSTOCK error, writing
-- nothing, when the stock key does not exist (never stocked, expired, or lost by the store):
-- a missing stock is unknown, not zero.
-- Keys written here get the stock's time to live (the room's, see src/rooms.rs).
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 then
  return redis.error_reply('NOSTOCK the room has no stock key')
end
local stock = tonumber(redis.call('GET', KEYS[1]))
local qty = tonumber(ARGV[1])
if stock < qty then
  return {0, stock}
end
local left = redis.call('DECRBY', KEYS[1], qty)
-- Times are built as strings: Lua 5.1 would print a 16-digit number in exponent form.
local t = redis.call('TIME')
local us = t[1] .. string.rep('0', 6 - #t[2]) .. t[2]
local entry = string.sub(ARGV[2], 1, -2) .. ',"enter_us":' .. us .. ',"exit_us":' .. us .. '}'
redis.call('RPUSH', KEYS[2], entry)
redis.call('INCRBY', KEYS[3], qty)
redis.call('XADD', KEYS[4], 'MAXLEN', '~', 5000, '*', 'kind', 'deduct', 'instance', ARGV[3],
  'at_us', us, 'stock', left)
if ttl > 0 then
  for i = 2, #KEYS do redis.call('PEXPIRE', KEYS[i], ttl) end
end
return {1, left}
