-- setnx, acquire: SETNX, take the lock if nobody holds it. There is no lease: a holder that
-- dies keeps it forever.
-- KEYS[1] the lock; ARGV[1] this holder's unique value.
-- Answers 1 taken, 0 busy (for how long, nobody can say).
return redis.call('SETNX', KEYS[1], ARGV[1])
