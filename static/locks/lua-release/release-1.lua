-- lua-release, release: compare and delete in one script, which Redis runs atomically, so
-- only my own lock is ever deleted; then wake the waiters.
-- KEYS[1] the lock; ARGV[1] this holder's unique value, ARGV[3] the release channel.
-- Answers 1 deleted, 0 gone or someone else's (I had lost it).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[3], 'released')
  return 1
end
return 0
