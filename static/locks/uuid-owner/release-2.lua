-- uuid-owner, release step 2: the delete, in a round trip of its own. The lease may have run
-- out since step 1 saw the lock was mine, and this deletes whoever's lock is there now.
-- KEYS[1] the lock; ARGV[3] the release channel.
-- Answers 1.
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], 'released')
return 1
