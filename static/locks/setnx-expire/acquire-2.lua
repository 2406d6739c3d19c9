-- setnx-expire, acquire step 2: the lease, as a command of its own. A holder that dies
-- between step 1 and this one leaves a lock with no lease.
-- KEYS[1] the lock; ARGV[2] the lease in ms.
-- Answers 1 (the lease is set: the lock is held).
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
