-- Takes the lease on the rooms left of the poll's reveal in every room: the rooms of its run
-- that have no outcome yet. The lease names the reveal's run and its holder; a lease on an
-- older reveal does not stand in the way (its runner stops when it sees the vote moved on).
-- KEYS[1] the poll; KEYS[2] runs per chapter; KEYS[3] the chapter's runs per room; KEYS[4] the
-- lease
-- ARGV[1] the chapter; ARGV[2] the reveal's run id, or '' for the poll's current one;
-- ARGV[3] the holder; ARGV[4] the lease (ms)
-- Returns {run id, room, room, ...}: the lease is taken for those rooms; or {} when there is
-- nothing to take (no such reveal, no room left, or the lease is someone else's).
if redis.call('HGET', KEYS[1], 'chapter') ~= ARGV[1] then return {} end
local run = redis.call('HGET', KEYS[2], ARGV[1])
if not run then return {} end
local ok, decoded = pcall(cjson.decode, run)
if not ok or type(decoded.id) ~= 'string' or type(decoded.every_room) ~= 'table' then
  return {}
end
if ARGV[2] ~= '' and decoded.id ~= ARGV[2] then return {} end
local held = redis.call('GET', KEYS[4])
if held and string.sub(held, 1, #decoded.id + 1) == decoded.id .. '\n' then return {} end
local left = {decoded.id}
for _, room in ipairs(decoded.every_room) do
  if redis.call('HEXISTS', KEYS[3], room) == 0 then left[#left + 1] = room end
end
if #left == 1 then return {} end
redis.call('SET', KEYS[4], decoded.id .. '\n' .. ARGV[3], 'PX', ARGV[4])
return left
