-- The rest of a lock step stamped with its lease (src/lock/lease_stamp.rs): the step ran above,
-- as a function of its own keys and arguments, and answered `reply`. What it did to the lease is
-- read off the lock itself, so the record is the store's whatever the step answers. An event
-- goes on the lock timeline on this server's clock, with the deadline the key now carries ('' for
-- a lock with no lease, held until released):
--   grant            an acquire step left the lock this owner's, and it was not before;
--   renew            the lock was this owner's before and after, and its deadline moved (a
--                    watchdog's renewal, a re-entry, one hold fewer, a second acquire step);
--   release          a release step found the lock this owner's and left it not;
--   refused_release  a release step found the lock not this owner's (gone, or another's).
-- It returns nothing: what the whole script answers is its tail's (the step's own reply, and for
-- a lab release step whose lock it was before and after, src/lab/step.lua). The stamp is written
-- with pcall: a store that refuses it (a lab user made before it was allowed to) loses the
-- stamp, and the recorder derives that lease, never the step.
local after = holder(KEYS[1])
local deadline = ''
if after == OWNER then deadline = deadline_of(KEYS[1]) end
local event
if STEP == 'acquire' and after == OWNER then
  if before ~= OWNER then event = 'grant' elseif deadline ~= before_deadline then event = 'renew' end
elseif STEP == 'renew' and after == OWNER then
  if deadline ~= before_deadline then event = 'renew' end
elseif STEP == 'release' then
  if before ~= OWNER then event = 'refused_release'
  elseif after ~= OWNER then event = 'release'
  elseif deadline ~= before_deadline then event = 'renew' end
end
if event then
  local t = redis.call('TIME')
  redis.pcall('XADD', STREAM, 'MAXLEN', '~', 5000, '*', 'kind', 'lease', 'lease', event,
    'owner', OWNER, 'deadline_us', deadline, 'at_us', t[1] .. string.rep('0', 6 - #t[2]) .. t[2])
end
