-- SETNX: take the lock if nobody holds it. No lease: a holder that dies keeps it forever.
return redis.call('SETNX', KEYS[1], ARGV[1])
