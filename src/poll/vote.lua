-- One room's vote, in one step: the token is the room's, the room is in the class, the round
-- the caller names is the one open now, the option exists; then the vote is written (again in
-- the same round: replaced). A vote racing a close is therefore counted in the round it closed
-- or refused, never lost between the two.
-- KEYS[1] the poll; KEYS[2] the class; KEYS[3] room tokens (digest -> room);
-- KEYS[4] the votes of the round the caller believes open; KEYS[5] the poll's version;
-- KEYS[6] the notes of that round (how sure, and why)
-- ARGV[1] the token's digest; ARGV[2] the room; ARGV[3] the option (from 0);
-- ARGV[4] the chapter and ARGV[5] the round the caller believes open; ARGV[6] the channel;
-- ARGV[7] the vote's note as JSON, '' for none (a vote without one removes the room's last)
-- Returns {'ok', the poll's version with this vote}, or a refusal: {'unknown_token'}, {'other_room', room}, {'not_in_class'},
-- {'no_open_round'}, {'stale', chapter, round} (ask again with those), {'out_of_range', n}.
local owner = redis.call('HGET', KEYS[3], ARGV[1])
if not owner then return {'unknown_token'} end
if owner ~= ARGV[2] then return {'other_room', owner} end

-- The class's rooms are <prefix>-01 … <prefix>-N, numbered as `routes::class` names them.
local class = redis.call('HMGET', KEYS[2], 'prefix', 'students')
local prefix, students = class[1], tonumber(class[2])
if not prefix or not students then return {'not_in_class'} end
local number = tonumber(string.match(ARGV[2], '^' .. prefix:gsub('%p', '%%%0') .. '%-(%d+)$') or '')
local width = math.max(2, string.len(tostring(students)))
if not number or number < 1 or number > students
    or string.format('%s-%0' .. width .. 'd', prefix, number) ~= ARGV[2] then
  return {'not_in_class'}
end

local poll = redis.call('HMGET', KEYS[1], 'chapter', 'round', 'open', 'options')
if poll[3] ~= '1' then return {'no_open_round'} end
if poll[1] ~= ARGV[4] or poll[2] ~= ARGV[5] then return {'stale', poll[1], poll[2]} end
local option = tonumber(ARGV[3])
if option >= tonumber(poll[4]) then return {'out_of_range', poll[4]} end

local before = redis.call('HGET', KEYS[4], ARGV[2])
local note_before = redis.call('HGET', KEYS[6], ARGV[2]) or ''
redis.call('HSET', KEYS[4], ARGV[2], ARGV[3])
if ARGV[7] == '' then
  redis.call('HDEL', KEYS[6], ARGV[2])
else
  redis.call('HSET', KEYS[6], ARGV[2], ARGV[7])
end
-- The same vote again changes nothing: no new version, nobody told.
if before == ARGV[3] and note_before == ARGV[7] then return {'ok', poll_version(KEYS[5], false)} end
local version = poll_version(KEYS[5], true)
redis.call('PUBLISH', ARGV[6], 'vote')
return {'ok', version}
