-- A page of the lock timeline and how much of it the stream's cap kept, read at one instant.
-- KEYS[1] timeline. ARGV[1] the range's start ('-' or '(<id>' to read after an entry),
-- ARGV[2] most entries.
-- Returns {entries added since the stream was made, entries it holds, XRANGE's entries}; a
-- missing stream (nothing recorded since the room's reset) is {0, 0, {}}.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {0, 0, {}}
end
local info = redis.call('XINFO', 'STREAM', KEYS[1])
local added, length = 0, 0
for i = 1, #info, 2 do
  if info[i] == 'entries-added' then added = info[i + 1] end
  if info[i] == 'length' then length = info[i + 1] end
end
return {added, length, redis.call('XRANGE', KEYS[1], ARGV[1], '+', 'COUNT', ARGV[2])}
