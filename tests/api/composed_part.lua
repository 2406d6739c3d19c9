-- A part for the composed-script test (hand_off.rs): ARGV[1] says what it does.
-- 'incr': INCR KEYS[1] and return it; 'fail': return an error reply; 'raise': a command that
-- raises (INCR on a list); 'nil': return nothing; 'take': answer as an acquire does,
-- {ARGV[2], 7} (0: not taken); 'echo': return ARGV[2].
if ARGV[1] == 'incr' then
  return redis.call('INCR', KEYS[1])
elseif ARGV[1] == 'fail' then
  return redis.error_reply('NOSTOCK told to fail')
elseif ARGV[1] == 'echo' then
  return ARGV[2]
elseif ARGV[1] == 'take' then
  return {tonumber(ARGV[2]), 7}
elseif ARGV[1] == 'raise' then
  redis.call('RPUSH', KEYS[1], 'x')
  return redis.call('INCR', KEYS[1])
end
