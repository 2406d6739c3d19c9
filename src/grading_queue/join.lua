-- A room joins the line for a grading, once: a room already in line or being graded keeps
-- its one place (a press again pushes nobody back) and is told its job.
-- KEYS[1] the line (room -> job, in order), KEYS[2] the slots (room -> lease end, ms),
-- KEYS[3] the places' leases (room -> lease end, ms), KEYS[4] the jobs being graded
-- (room -> "job:started ms"), KEYS[5] the job counter.
-- ARGV[1] room, ARGV[2] lease (ms). Returns {job, 1 if it joined now else 0}. After
-- lapse.lua: a room whose driving instance died is no longer there, and joins anew.
local room, lease = ARGV[1], tonumber(ARGV[2])
local graded = redis.call('HGET', KEYS[4], room)
if graded and redis.call('ZSCORE', KEYS[2], room) then
  return {tonumber(string.match(graded, '^(%d+)')), 0}
end
local queued = redis.call('ZSCORE', KEYS[1], room)
if queued then
  return {tonumber(queued), 0}
end
local job = redis.call('INCR', KEYS[5])
redis.call('ZADD', KEYS[1], job, room)
redis.call('ZADD', KEYS[3], now + lease, room)
return {job, 1}
