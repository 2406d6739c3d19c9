-- Record something a lock operation saw, in the resource store: count it and put it on the
-- lock timeline, stamped with Redis' clock.
-- KEYS[1] counter to increment ('' key name allowed: pass the timeline twice to count nothing),
-- KEYS[2] timeline, KEYS[3] the room's reset generation
-- ARGV[1] '1' to count, '0' not to; ARGV[2] kind; ARGV[3] the room's reset generation when
-- the event's sale began, or '' not to check; ARGV[4..] field, value pairs
-- Returns 1, or 0 with nothing written when the room was reset since: the event
-- belongs to figures the reset cleared (a reset deletes the room's locks, so the releases of
-- sales still under way find them gone).
if ARGV[3] ~= '' and (redis.call('GET', KEYS[3]) or '') ~= ARGV[3] then
  return 0
end
if ARGV[1] == '1' then
  redis.call('INCR', KEYS[1])
end
local t = redis.call('TIME')
local entry = {'kind', ARGV[2]}
for i = 4, #ARGV do
  entry[#entry + 1] = ARGV[i]
end
entry[#entry + 1] = 'at_us'
-- Times are built as strings: Lua 5.1 would print a 16-digit number in exponent form.
entry[#entry + 1] = t[1] .. string.rep('0', 6 - #t[2]) .. t[2]
redis.call('XADD', KEYS[2], 'MAXLEN', '~', 5000, '*', unpack(entry))
return 1
