-- Deletes the poll and every result of the class (a class closed, or a new one made).
-- KEYS[1] the poll's version (kept: it goes on growing), KEYS[2] the poll, KEYS[3] the
-- chapters polled; KEYS[2..] every key of the vote, the chapters' own included.
-- ARGV[1] the channel; ARGV[2..] the chapters polled, as the caller read them to name their
-- keys: a chapter polled since (a vote opened in between) has keys this call does not name,
-- so nothing is deleted and the caller reads the chapters again.
-- Returns the poll's new version, or -1 when the chapters changed.
local chapters = redis.call('ZRANGE', KEYS[3], 0, -1)
if #chapters ~= #ARGV - 1 then
  return -1
end
for i, chapter in ipairs(chapters) do
  if chapter ~= ARGV[i + 1] then
    return -1
  end
end
local version = poll_version(KEYS[1], true)
redis.call('DEL', unpack(KEYS, 2))
redis.call('PUBLISH', ARGV[1], 'deleted')
return version
