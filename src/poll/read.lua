-- The poll and the class as they are now, and the version they are at: a snapshot's first
-- read (its second reads the version again, beside the votes, to tell whether it changed).
-- KEYS[1] the poll; KEYS[2] the class; KEYS[3] the poll's version
-- Returns {version, 1 if a change counted it (0: the store's clock), {the poll's fields and
-- values}, {the class's prefix, its students}}.
return {
  poll_version(KEYS[3], false),
  redis.call('EXISTS', KEYS[3]),
  redis.call('HGETALL', KEYS[1]),
  redis.call('HMGET', KEYS[2], 'prefix', 'students'),
}
