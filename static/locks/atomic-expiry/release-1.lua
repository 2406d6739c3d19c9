-- atomic-expiry, release: DEL whatever lock is there, without looking whose it is, and wake
-- the waiters. After a lease ran out this deletes the next holder's lock.
-- KEYS[1] the lock; ARGV[3] the release channel.
-- Answers 1.
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], 'released')
return 1
