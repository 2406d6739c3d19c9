-- setnx-expire, release: DEL whatever lock is there, whoever holds it, and wake the waiters.
-- KEYS[1] the lock; ARGV[3] the release channel.
-- Answers 1.
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], 'released')
return 1
