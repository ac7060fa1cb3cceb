-- Applies a save of the pins atomically (Redis runs a script alone).
-- KEYS[1]: the pins hash; KEYS[2]: the write counter; KEYS[3]: the schema version.
-- ARGV[1]: the channel announcing writes; ARGV[2]: the schema version this
-- toolselect writes; then, per change, the entry's key, the JSON it must
-- still hold ("" for none) and its new JSON ("" to remove it).
-- Returns the counter before and after, how many changes were refused
-- (the entry changed meanwhile) and every entry.
local schema = redis.call('GET', KEYS[3])
if schema and schema ~= ARGV[2] then
  return redis.error_reply('SCHEMA ' .. schema)
end
local before = redis.call('GET', KEYS[2]) or ''
local applied, refused = 0, 0
for i = 3, #ARGV, 3 do
  local current = redis.call('HGET', KEYS[1], ARGV[i]) or ''
  if current == ARGV[i + 1] then
    if ARGV[i + 2] == '' then
      redis.call('HDEL', KEYS[1], ARGV[i])
    else
      redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 2])
    end
    applied = applied + 1
  else
    refused = refused + 1
  end
end
local after = before
if applied > 0 or not schema then
  redis.call('SET', KEYS[3], ARGV[2])
  after = tostring(redis.call('INCR', KEYS[2]))
  redis.call('PUBLISH', ARGV[1], after)
end
return {before, after, refused, redis.call('HGETALL', KEYS[1])}
