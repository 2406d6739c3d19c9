-- Then delete, in a round trip of its own: the lease may have run out since the check.
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], 'released')
return 1
