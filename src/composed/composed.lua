-- The end of a script composed of others (src/composed.rs): the parts come before this as
-- PARTS[1..n], each one script's source as a function of its own KEYS and ARGV.
-- Runs every part in order, each on its own keys and arguments, and returns every part's
-- reply, in order: an error (returned or raised) is that part's reply and does not stop the
-- parts after it, as in a pipeline.
-- KEYS: the parts' keys, one part after the other.
-- ARGV[1] '1' when the parts after the first run only if the first took what it asked for (a
-- lock), read as the lab's contract reads an acquire (src/lab/mod.rs): a number above 0, a
-- status, or a table whose first element is one of those; otherwise they are skipped and
-- their replies are nil. Their arguments that are exactly ACQUIRED (below) then become the
-- fencing token the acquire took (a table's second element above 0), or '' for none. '0'
-- runs them all, as they are; '2' runs them all, sent with a lock already held: their
-- arguments that are exactly ACQUIRED become ARGV[2], the token it was taken with.
-- ARGV[2] that token ('' for none, or when unused).
-- ARGV[3..n+2] each part's number of keys, ARGV[n+3..2n+2] each part's number of arguments,
-- then the parts' arguments, one part after the other.
local ACQUIRED = '\0acquired[2]'
local function took(reply)
  if type(reply) == 'table' then
    if reply.err then return false end
    if reply.ok then return true end
    reply = reply[1]
  end
  if type(reply) == 'number' then return reply > 0 end
  if type(reply) == 'string' then return reply ~= '' and reply ~= '0' end
  return reply == true
end
local n = #PARTS
local gated = ARGV[1] == '1'
local holding = ARGV[1] == '2'
local token = holding and ARGV[2] or ''
local replies = {}
local k, a = 0, 2 * n + 2
for i = 1, n do
  local keys, args = {}, {}
  for j = 1, tonumber(ARGV[2 + i]) do keys[j] = KEYS[k + j] end
  for j = 1, tonumber(ARGV[2 + n + i]) do
    args[j] = ARGV[a + j]
    if ((gated and i > 1) or holding) and args[j] == ACQUIRED then args[j] = token end
  end
  k, a = k + #keys, a + #args
  local ok, reply = pcall(PARTS[i], keys, args)
  if not ok and type(reply) ~= 'table' then
    reply = redis.error_reply(tostring(reply))
  end
  -- A nil would end the reply array early.
  if reply == nil then reply = false end
  replies[i] = reply
  if i == 1 and gated then
    if not ok or not took(reply) then
      for j = 2, n do replies[j] = false end
      return replies
    end
    if type(reply) == 'table' and type(reply[2]) == 'number' and reply[2] > 0 then
      token = tostring(reply[2])
    end
  end
end
return replies
