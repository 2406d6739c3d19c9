-- Put before every script that changes or reads the poll (`ballot_box` joins them): the poll's
-- version, one more with every change, counted in the script that makes the change so that it
-- is atomic with it and one for the whole fleet. A view carries the version it was read at; a
-- page drops a view older than the one it drew.
-- A store that restarted empty has lost the count: it starts again from the store's clock in
-- microseconds, above every version given out before (which would take more than one change a
-- microsecond since the count began). 16 digits until the year 2255: exact in a double, and in
-- a JavaScript number.
local function poll_version(key, change)
  if redis.call('EXISTS', key) == 0 then
    local t = redis.call('TIME')
    redis.call('SET', key, t[1] .. string.format('%06d', tonumber(t[2])))
  end
  if change then return redis.call('INCR', key) end
  return tonumber(redis.call('GET', key))
end

