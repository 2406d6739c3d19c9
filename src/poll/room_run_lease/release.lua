-- Gives the lease back, only if it is still this holder's.
-- KEYS[1] the lease; ARGV[1] its value (run id, newline, holder). Returns 1 if deleted.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
