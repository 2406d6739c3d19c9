-- fair, release: one hold fewer; the last one deletes the lock and calls the first buyer in
-- the queue by name, so that buyer alone comes for it, not every waiter: a message on the
-- release channel ('next:<owner>') for a buyer listening there, and a note in the list
-- '<lock>:call:<owner>' for a buyer whose next attempt waits in the store on that list (a
-- blocking pop): the store runs that attempt as soon as this script ends. Such a buyer marks
-- itself ('<lock>:call:<owner>:parked', as long as its pop may wait), and gets no message.
-- KEYS[1] the lock (a hash), KEYS[3] the waiters' queue, KEYS[4] when each place lapses;
-- ARGV[1] this holder's unique value, ARGV[2] the lease in ms, ARGV[3] the release channel.
-- Answers 1 released (or one hold fewer), 0 not mine any more (its lease ran out).
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
redis.call('DEL', KEYS[1])
-- Call a buyer still coming back: lapsed places at the front go first.
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local first = redis.call('LINDEX', KEYS[3], 0)
while first do
  local lapses = tonumber(redis.call('ZSCORE', KEYS[4], first))
  if lapses and lapses > now then
    local call = KEYS[1] .. ':call:' .. first
    redis.call('RPUSH', call, 1)
    redis.call('PEXPIRE', call, ARGV[2])
    -- A buyer marked parked has its attempt waiting on the call: no message needed.
    if redis.call('DEL', call .. ':parked') == 0 then
      redis.call('PUBLISH', ARGV[3], 'next:' .. first)
    end
    break
  end
  redis.call('LPOP', KEYS[3])
  redis.call('ZREM', KEYS[4], first)
  first = redis.call('LINDEX', KEYS[3], 0)
end
return 1
