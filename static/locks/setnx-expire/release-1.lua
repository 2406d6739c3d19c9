-- DEL whatever lock is there, and wake the waiters.
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], 'released')
return 1
