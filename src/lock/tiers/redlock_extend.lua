-- Redlock's extension, on one master: a new lease for the lock only while it still holds
-- this owner's value. 1: extended; 0: gone or someone else's. Also the owner-checked extend
-- of the `extend-checked` fault, on one Redis (`faulty/extend.rs`).
-- KEYS[1] lock, ARGV[1] owner, ARGV[2] lease ms
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
