-- Closes the round in progress; a closed one stays closed.
-- KEYS[1] the poll; KEYS[2] the poll's version; ARGV[1] the channel
-- Returns the chapter polled, or false when there is no poll.
local chapter = redis.call('HGET', KEYS[1], 'chapter')
if not chapter then return false end
if redis.call('HGET', KEYS[1], 'open') == '1' then
  redis.call('HSET', KEYS[1], 'open', 0)
  poll_version(KEYS[2], true)
  redis.call('PUBLISH', ARGV[1], 'close')
end
return chapter
