-- Leave the critical section, writing the sale if there is one (the articles' SET n-1).
-- KEYS[1] stock, KEYS[2] ledger, KEYS[3] items sold, KEYS[4] exits, KEYS[5] overlaps,
-- KEYS[6] highest fencing token seen, KEYS[7] stale counter, KEYS[8] timeline,
-- KEYS[9] the room's reset generation, KEYS[10] the initial stock
-- ARGV[1] exits seen at enter, ARGV[2] new stock ('' = sold out, nothing to write),
-- ARGV[3] qty, ARGV[4] the order as a JSON object, ARGV[5] fencing token or '',
-- ARGV[6] instance, ARGV[7] owner, ARGV[8] the room's reset generation when the sale began
-- ('' when the room had none: not checked), ARGV[9] µs since the instance began the sale
-- (waiting for the lock included)
-- Returns {outcome, overlaps found, items this sale sold beyond the initial stock (the
-- growth of the ground truth's oversold, for the instance's metrics)}: outcome 'sold', 'sold_out', 'stale', or 'reset' (writing
-- nothing) when an admin reset the room since the sale began: n-1 from a read of the old
-- stock, or under a lock the reset deleted, would land on the new figures. A
-- NOSTOCK error, writing nothing, when the stock key vanished since the enter (the store
-- restarted empty): writing n-1 then would bring back a stock nobody knows.
--
-- The stock keeps its time to live (SET … KEEPTTL); keys written here get the stock's, and
-- only those (the overlap clock and the timeline always, the rest when written).
--
-- Overlaps: every section that exited between our enter and our exit ran at the same time as
-- us, so each overlapping pair is counted once, by whichever of the two exits last. A holder
-- that never exits (it crashed) is never counted, and never makes others count.
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 then
  return redis.error_reply('NOSTOCK the room has no stock key')
end
if ARGV[8] ~= '' and (redis.call('GET', KEYS[9]) or '') ~= ARGV[8] then
  return {'reset', 0, 0}
end
local t = redis.call('TIME')
-- Times are built as strings: Lua 5.1 would print a 16-digit number in exponent form.
local at = t[1] .. string.rep('0', 6 - #t[2]) .. t[2]
local written = {KEYS[4], KEYS[8]}
local exits = redis.call('INCR', KEYS[4])
local overlaps = exits - 1 - tonumber(ARGV[1])
if overlaps > 0 then
  redis.call('INCRBY', KEYS[5], overlaps)
  written[#written + 1] = KEYS[5]
end
local oversold = 0
local function leave(outcome)
  redis.call('XADD', KEYS[8], 'MAXLEN', '~', 5000, '*', 'kind', 'exit', 'instance', ARGV[6],
    'owner', ARGV[7], 'fence', ARGV[5], 'at_us', at, 'outcome', outcome, 'overlaps', overlaps,
    'took_us', ARGV[9])
  if ttl > 0 then
    for _, key in ipairs(written) do redis.call('PEXPIRE', key, ttl) end
  end
  return {outcome, overlaps, oversold}
end
if ARGV[2] == '' then
  return leave('sold_out')
end
if ARGV[5] ~= '' then
  local seen = tonumber(redis.call('GET', KEYS[6]) or '0')
  if tonumber(ARGV[5]) < seen then
    redis.call('INCR', KEYS[7])
    written[#written + 1] = KEYS[7]
    return leave('stale')
  end
  redis.call('SET', KEYS[6], ARGV[5])
  written[#written + 1] = KEYS[6]
end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
redis.call('RPUSH', KEYS[2], string.sub(ARGV[4], 1, -2) .. ',"exit_us":' .. at .. '}')
local sold = redis.call('INCRBY', KEYS[3], ARGV[3])
local initial = tonumber(redis.call('GET', KEYS[10]) or '0')
oversold = math.max(0, sold - initial) - math.max(0, sold - tonumber(ARGV[3]) - initial)
written[#written + 1] = KEYS[2]
written[#written + 1] = KEYS[3]
return leave('sold')
