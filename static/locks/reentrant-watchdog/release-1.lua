-- reentrant-watchdog, release: one hold fewer; the last one deletes the lock and wakes the
-- waiters, one still held keeps its lease going.
-- KEYS[1] the lock (a hash); ARGV[1] this holder's unique value, ARGV[2] the lease in ms,
-- ARGV[3] the release channel.
-- Answers 1 released (or one hold fewer), 0 not mine any more (its lease ran out).
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], 'released')
return 1
