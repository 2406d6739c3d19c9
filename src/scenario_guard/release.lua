-- Give the guard back, only if it is still this holder's.
-- KEYS[1] guard; ARGV[1] holder. Returns 1 if deleted, 0 otherwise.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
