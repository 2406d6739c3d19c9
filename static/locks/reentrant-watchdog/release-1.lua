-- One hold fewer; the last one deletes the lock and wakes the waiters. Not mine: stop.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], 'released')
return 1
