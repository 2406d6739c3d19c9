-- fair, acquire: reentrant-watchdog's hash (owner -> hold count), handed out in the order the
-- buyers came. A buyer who finds the lock held, or free but owed to someone queued before it,
-- gets a place at the end of the queue (or keeps the one it has); a place lapses when its
-- owner stops coming back for it (gave up, died), so the store's clock (TIME) says when.
-- KEYS[1] the lock (a hash), KEYS[3] the waiters' queue (a list of owners), KEYS[4] when each
-- place lapses (a sorted set, ms); ARGV[1] this buyer's unique value, ARGV[2] the lease in ms,
-- ARGV[4] how much longer this buyer will wait, in ms.
-- Answers {depth, 0} held (1 fresh, 2 or more re-entered); {0, ms} busy: come back within ms.
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local lease = tonumber(ARGV[2])
-- Lapsed places at the front go: their owners are not coming back.
local first = redis.call('LINDEX', KEYS[3], 0)
while first do
  local lapses = tonumber(redis.call('ZSCORE', KEYS[4], first))
  if lapses and lapses > now then
    break
  end
  redis.call('LPOP', KEYS[3])
  redis.call('ZREM', KEYS[4], first)
  first = redis.call('LINDEX', KEYS[3], 0)
end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  local depth = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  redis.call('PEXPIRE', KEYS[1], lease)
  return {depth, 0}
end
if redis.call('EXISTS', KEYS[1]) == 0 and (not first or first == ARGV[1]) then
  if first then
    redis.call('LPOP', KEYS[3])
    redis.call('ZREM', KEYS[4], first)
  end
  redis.call('HSET', KEYS[1], ARGV[1], 1)
  redis.call('PEXPIRE', KEYS[1], lease)
  return {1, 0}
end
if not redis.call('ZSCORE', KEYS[4], ARGV[1]) then
  redis.call('RPUSH', KEYS[3], ARGV[1])
end
redis.call('ZADD', KEYS[4], now + math.min(lease, tonumber(ARGV[4])), ARGV[1])
-- No place outlives a lease without a visit, so neither does a queue nobody visits.
redis.call('PEXPIRE', KEYS[3], lease)
redis.call('PEXPIRE', KEYS[4], lease)
-- Come back before the place lapses (a third of the lease, the watchdog's beat), when the
-- lease ends (its holder may be dead), or when the first place lapses (its owner may be).
local back = math.floor(lease / 3)
local left = redis.call('PTTL', KEYS[1])
if left >= 0 then
  back = math.min(back, left)
elseif first and first ~= ARGV[1] then
  back = math.min(back, tonumber(redis.call('ZSCORE', KEYS[4], first)) - now)
end
return {0, math.max(back, 1)}
