-- The lease, as a second command: a holder that dies before it leaves a lock with none.
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
