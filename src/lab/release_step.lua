local function holder(key) local kind = redis.call('TYPE', key)['ok'] if kind == 'string' then return redis.call('GET', key) elseif kind == 'hash' then return redis.call('HKEYS', key)[1] or '' end return '' end local before = holder(KEYS[1]) local reply = (function(KEYS, ARGV) --[[STEP]]
end)(KEYS, ARGV)
-- A release step of a lab lock (src/lab/mod.rs), run as the room's lock-store user: the
-- student's source stands in for the placeholder above, inside a function of its own, and
-- everything before it is on the first line so that Redis's line numbers are the student's.
-- Returns the student's reply, and whose lock KEYS[1] held before and after it ran (a string
-- lock's value, a hash lock's first field; '' for none): a release that removed another
-- holder's lock is how the ground truth counts a foreign release.
if reply == nil then reply = false end
return {reply, before, holder(KEYS[1])}
