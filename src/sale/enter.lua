-- Enter the critical section: read the stock (the articles' GET), and note the overlap clock.
-- KEYS[1] stock, KEYS[2] exits, KEYS[3] highest fencing token seen, KEYS[4] stale counter,
-- KEYS[5] timeline, KEYS[6] the room's reset generation
-- ARGV[1] this holder's fencing token, or '' for unfenced tiers; ARGV[2] instance; ARGV[3] owner;
-- ARGV[4] the room's reset generation when the sale began ('' when it had none: not checked)
-- Returns {stock, exits so far, Redis time in us}, or {-1, 0, time} when the token is stale;
-- a NOSTOCK error, writing nothing, when the stock key does not exist (the room was never
-- stocked, expired, or the store lost it): a missing stock is unknown, not zero. A RESET error,
-- writing nothing, when an admin reset the room since the sale began: its token (the reset
-- restarts them) and its read belong to the figures the reset cleared.
--
-- A fenced read also raises the highest token seen: once a newer holder has read the stock,
-- an older holder can no longer write a value based on its own, older read.
--
-- Keys written here live as long as the stock (the room's time to live, see src/rooms.rs);
-- only those: the exit (commit.lua) gives the keys it writes their time to live itself.
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 then
  return redis.error_reply('NOSTOCK the room has no stock key')
end
if ARGV[4] ~= '' and (redis.call('GET', KEYS[6]) or '') ~= ARGV[4] then
  return redis.error_reply('RESET the room was reset since the sale began')
end
local function expire_with_stock(...)
  if ttl > 0 then
    for _, key in ipairs({...}) do redis.call('PEXPIRE', key, ttl) end
  end
end
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local at = t[1] .. string.rep('0', 6 - #t[2]) .. t[2]
if ARGV[1] ~= '' then
  local seen = tonumber(redis.call('GET', KEYS[3]) or '0')
  if tonumber(ARGV[1]) < seen then
    redis.call('INCR', KEYS[4])
    redis.call('XADD', KEYS[5], 'MAXLEN', '~', 5000, '*', 'kind', 'stale', 'instance', ARGV[2],
      'owner', ARGV[3], 'fence', ARGV[1], 'at_us', at)
    expire_with_stock(KEYS[4], KEYS[5])
    return {-1, 0, now}
  end
  redis.call('SET', KEYS[3], ARGV[1])
  expire_with_stock(KEYS[3])
end
local stock = tonumber(redis.call('GET', KEYS[1]))
local exits = tonumber(redis.call('GET', KEYS[2]) or '0')
redis.call('XADD', KEYS[5], 'MAXLEN', '~', 5000, '*', 'kind', 'enter', 'instance', ARGV[2],
  'owner', ARGV[3], 'fence', ARGV[1], 'at_us', at, 'stock', stock)
expire_with_stock(KEYS[5])
return {stock, exits, now}
