-- The start of a lock step stamped with its lease (src/lock/lease_stamp.rs): whose lock KEYS[1]
-- is before the step (a string lock's value, a hash lock's first field, '' for none) and, when
-- it is this owner's, the deadline it carries. The step's call carries three things more than
-- its own: the lock timeline as its last key, the step's kind (acquire, renew, release) and its
-- owner as its last two arguments; the step sees only its own.
local function holder(key)
  local kind = redis.call('TYPE', key)['ok']
  if kind == 'string' then return redis.call('GET', key) end
  if kind == 'hash' then return redis.call('HKEYS', key)[1] or '' end
  return ''
end
-- The key's deadline on this server's clock, in µs ('' for none). Whole milliseconds fit Lua's
-- number format; microseconds would print in exponent form.
local function deadline_of(key)
  local ms = redis.pcall('PEXPIRETIME', key)
  if type(ms) == 'number' and ms >= 0 then return ms .. '000' end
  return ''
end
local STREAM, STEP, OWNER = KEYS[#KEYS], ARGV[#ARGV - 1], ARGV[#ARGV]
local keys, args = {unpack(KEYS, 1, #KEYS - 1)}, {unpack(ARGV, 1, #ARGV - 2)}
local before = holder(KEYS[1])
local before_deadline = ''
if before == OWNER then before_deadline = deadline_of(KEYS[1]) end
