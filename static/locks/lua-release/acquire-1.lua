-- SET NX PX: the lock and its lease in one command. Busy: say how long the lease has left.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return {0, redis.call('PTTL', KEYS[1])}
