-- Opens round 1 of a chapter, replacing any poll in progress. A chapter polled before starts
-- again: its earlier votes and runs go (the results keep one poll per chapter, the last).
-- KEYS[1] the poll; KEYS[2] the class; KEYS[3] chapters polled (zset); KEYS[4] rounds per
-- chapter; KEYS[5] runs per chapter; KEYS[6], KEYS[7] the chapter's votes of rounds 1 and 2;
-- KEYS[8] the chapter's runs per room; KEYS[9] the poll's version; KEYS[10], KEYS[11] the
-- chapter's notes of rounds 1 and 2
-- ARGV[1] the chapter; ARGV[2] how many options its question has; ARGV[3] the channel
-- Returns 1, or 0 when there is no class.
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('DEL', KEYS[1], KEYS[6], KEYS[7], KEYS[8], KEYS[10], KEYS[11])
redis.call('HSET', KEYS[1], 'chapter', ARGV[1], 'round', 1, 'open', 1, 'revealed', 0,
  'options', ARGV[2])
redis.call('ZADD', KEYS[3], 'NX', now, ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], 1)
redis.call('HDEL', KEYS[5], ARGV[1])
poll_version(KEYS[9], true)
redis.call('PUBLISH', ARGV[3], 'open')
return 1
