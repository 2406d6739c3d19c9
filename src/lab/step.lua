local function holder(key) local kind = redis.call('TYPE', key)['ok'] if kind == 'string' then return redis.call('GET', key) elseif kind == 'hash' then return redis.call('HKEYS', key)[1] or '' end return '' end local function deadline_of(key) local ms = redis.pcall('PEXPIRETIME', key) if type(ms) == 'number' and ms >= 0 then return ms .. '000' end return '' end local STREAM, STEP, OWNER = KEYS[5], ARGV[5], ARGV[1] local keys, args = {KEYS[1], KEYS[2], KEYS[3], KEYS[4]}, {ARGV[1], ARGV[2], ARGV[3], ARGV[4]} local before = holder(KEYS[1]) local before_deadline = '' if before == OWNER then before_deadline = deadline_of(KEYS[1]) end local reply = (function(KEYS, ARGV) --[[STEP]]
end)(keys, args)
-- A step of a lab lock (src/lab/mod.rs), run as the room's lock-store user: the student's
-- source stands in for the placeholder above, inside a function of its own that sees the lab's
-- four keys and four arguments alone, and everything before it is on the first line so that
-- Redis's line numbers are the student's. Around it: whose lock KEYS[1] held before and after
-- it (a string lock's value, a hash lock's first field; '' for none), and the lease it left,
-- stamped on the lock store's own stream (KEYS[5], the lock's `:leases`) by what changed
-- (src/lock/lease_stamp.lua follows). ARGV[5] is the step's kind: acquire, renew or release.
-- Returns the student's reply; a release step's as {reply, before, after}: a release that
-- removed another holder's lock is how the ground truth counts a foreign release.
