-- Extends the lease, only while it is still this holder's.
-- KEYS[1] the lease; ARGV[1] its value (run id, newline, holder); ARGV[2] the lease (ms).
-- Returns 1 if extended, 0 if lost.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
