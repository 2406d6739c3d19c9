-- Reveals the poll of a chapter: keeps the run it was revealed with (when one is given) and
-- marks the poll revealed, its round closed. Nothing changes if the poll moved to another
-- chapter meanwhile (the run took seconds): that run answers a question no longer asked.
-- Revealed again with the run kept, a revealed poll does not change.
-- KEYS[1] the poll; KEYS[2] runs per chapter; KEYS[3] the poll's version
-- ARGV[1] the chapter; ARGV[2] the run as JSON, or '' to reveal the one kept; ARGV[3] the channel
-- Returns 'ok', 'moved' or 'no_run'.
if redis.call('HGET', KEYS[1], 'chapter') ~= ARGV[1] then return 'moved' end
if ARGV[2] ~= '' then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
elseif redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then
  return 'no_run'
end
local poll = redis.call('HMGET', KEYS[1], 'open', 'revealed')
if ARGV[2] ~= '' or poll[1] ~= '0' or poll[2] ~= '1' then
  redis.call('HSET', KEYS[1], 'open', 0, 'revealed', 1)
  poll_version(KEYS[3], true)
  redis.call('PUBLISH', ARGV[3], 'reveal')
end
return 'ok'
