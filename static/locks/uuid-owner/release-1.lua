-- Check: is the lock still mine? Go on to the delete only if it is.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return 1
end
return 0
