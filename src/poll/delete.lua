-- Deletes the poll and every result of the class (a class closed, or a new one made).
-- KEYS[1] the poll's version (kept: it goes on growing); KEYS[2..] the keys of the vote
-- ARGV[1] the channel
-- Returns the poll's new version.
local version = poll_version(KEYS[1], true)
redis.call('DEL', unpack(KEYS, 2))
redis.call('PUBLISH', ARGV[1], 'deleted')
return version
