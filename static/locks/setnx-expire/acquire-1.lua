-- setnx-expire, acquire step 1: SETNX, take the lock if nobody holds it. The lease comes in
-- step 2, a round trip of its own.
-- KEYS[1] the lock; ARGV[1] this holder's unique value.
-- Answers 1 taken (go on to step 2), 0 busy.
return redis.call('SETNX', KEYS[1], ARGV[1])
