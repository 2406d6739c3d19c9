-- Whether it is a room's turn to be graded, asked by the instance driving its grading (which
-- keeps asking: each ask renews its place, or its slot once it has one). After lapse.lua: a
-- slot or a place whose instance stopped asking (it died) is gone, so the line never waits
-- for the dead.
-- KEYS as join.lua's first four; ARGV[1] room, ARGV[2] lease (ms), ARGV[3] slots.
-- Returns 0: graded now (a slot is the room's); n > 0: n-th in line; -1: not in line.
local room, lease, slots = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if redis.call('ZSCORE', KEYS[2], room) then
  redis.call('ZADD', KEYS[2], now + lease, room)
  return 0
end
local rank = redis.call('ZRANK', KEYS[1], room)
if not rank then
  return -1
end
if rank < slots - redis.call('ZCARD', KEYS[2]) then
  local job = redis.call('ZSCORE', KEYS[1], room)
  redis.call('ZREM', KEYS[1], room)
  redis.call('ZREM', KEYS[3], room)
  redis.call('ZADD', KEYS[2], now + lease, room)
  redis.call('HSET', KEYS[4], room, job .. ':' .. now)
  return 0
end
redis.call('ZADD', KEYS[3], now + lease, room)
return rank + 1
