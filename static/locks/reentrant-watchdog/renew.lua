-- The watchdog, every lease/3 while the work runs: still mine? Then the lease starts over.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
