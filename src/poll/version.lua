-- Put before every script that changes or reads the poll (`ballot_box` joins them): the poll's
-- version, one more with every change, counted in the script that makes the change so that it
-- is atomic with it and one for the whole fleet. A view carries the version it was read at; a
-- page drops a view older than the one it drew.
-- A store without the count (new, or restarted empty) starts it at the store's clock in
-- microseconds, above every version given out before (which would take more than one change a
-- microsecond since the count began); a read of such a store answers the clock and writes
-- nothing. 16 digits until the year 2255: exact in a double, and in a JavaScript number.
local function poll_version(key, change)
  local version = redis.call('GET', key)
  if not version then
    local t = redis.call('TIME')
    version = t[1] .. string.format('%06d', tonumber(t[2]))
    if not change then return tonumber(version) end
    redis.call('SET', key, version)
  end
  if change then return redis.call('INCR', key) end
  return tonumber(version)
end

