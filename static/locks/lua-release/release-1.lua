-- Compare and delete in one script: only my own lock is ever deleted.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[3], 'released')
  return 1
end
return 0
