-- One room's run of a chapter after its reveal in every room, kept only while that reveal is
-- still the poll's: a run of a chapter whose vote moved on (another chapter opened, the chapter
-- opened again, the class closed) answers a question no longer asked, and its rooms stop.
-- KEYS[1] the poll; KEYS[2] runs per chapter; KEYS[3] the chapter's runs per room; KEYS[4] the
-- poll's version
-- ARGV[1] the chapter; ARGV[2] the reveal's run id; ARGV[3] the room, or '' only to ask
-- whether the reveal is still the poll's; ARGV[4] the room's run as JSON; ARGV[5] the channel;
-- ARGV[6] '1' to replace the room's outcome if it has one, '0' to keep that one
-- Returns 1 (kept, or still the poll's, or the room had an outcome to keep), or 0.
if redis.call('HGET', KEYS[1], 'chapter') ~= ARGV[1] then return 0 end
local run = redis.call('HGET', KEYS[2], ARGV[1])
if not run then return 0 end
local ok, decoded = pcall(cjson.decode, run)
if not ok or decoded.id ~= ARGV[2] then return 0 end
if ARGV[3] == '' then return 1 end
if ARGV[6] == '1' then
  redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
elseif redis.call('HSETNX', KEYS[3], ARGV[3], ARGV[4]) == 0 then
  return 1
end
poll_version(KEYS[4], true)
redis.call('PUBLISH', ARGV[5], 'room_run')
return 1
