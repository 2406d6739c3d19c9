-- Closes the round in progress and opens the next one of the same chapter.
-- KEYS[1] the poll; KEYS[2] rounds per chapter; KEYS[3] the poll's version
-- ARGV[1] the last round there may be; ARGV[2] the channel
-- Returns {'ok', round}, or {'no_poll'}, {'revealed'}, {'last_round', round}.
local poll = redis.call('HMGET', KEYS[1], 'chapter', 'round', 'revealed')
if not poll[1] then return {'no_poll'} end
if poll[3] == '1' then return {'revealed'} end
local round = tonumber(poll[2])
if round >= tonumber(ARGV[1]) then return {'last_round', round} end
round = round + 1
redis.call('HSET', KEYS[1], 'round', round, 'open', 1)
redis.call('HSET', KEYS[2], poll[1], round)
poll_version(KEYS[3], true)
redis.call('PUBLISH', ARGV[2], 'round')
return {'ok', round}
