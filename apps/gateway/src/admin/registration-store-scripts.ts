/**
 * The Lua scripts of RedisRegistrationStore. Each runs atomically in Redis, so a check and the
 * write it guards cannot interleave with another replica's (the compare-and-set of
 * docs/operations.md §15 "Shared and durable").
 *
 * KEYS[1] is the registrations hash (field = upstream id, value = record JSON), KEYS[2] the meta
 * hash (`generation`: the store's marker; `version`: the counter every write draws its version
 * from), KEYS[3] the set of ids deleted since the store was last re-seeded (with an expiry), so
 * a replica that re-seeds late does not bring a deleted registration back. A record is written
 * as `{"version":<n>,` followed by the caller's JSON without its opening brace (ARGV "tail"):
 * the script never re-encodes JSON (cjson would turn `[]` into `{}`).
 *
 * Every write first compares the meta's `generation` with the one the replica read: a store
 * that lost its data (no marker) or was re-seeded since is answered `generation`, unchanged.
 */

/** The published-name prefix of a stored record, as upstreamNamePrefix writes it. */
const PREFIX_OF = `
local function prefixOf(id, raw)
  local ok, r = pcall(cjson.decode, raw)
  if ok and type(r) == 'table' and type(r.upstream) == 'table' and type(r.upstream.namePrefix) == 'string' then
    return r.upstream.namePrefix
  end
  return (string.gsub(id, '[^%w_%-]', '_')) .. '__'
end
local function versionOf(raw)
  local ok, r = pcall(cjson.decode, raw)
  if ok and type(r) == 'table' and type(r.version) == 'number' then return r.version end
  return 0
end
`;

/**
 * ARGV: id, tail, generation, prefix, maxRegistrations. → {created, version} | {idTaken} |
 * {prefixTaken, id, prefix} | {full} | {generation}. The prefix rule is upstreamProblems'
 * (equal, or one starts with the other; "" is checked by the sole-source rule beforehand).
 */
export const CREATE = `${PREFIX_OF}
if redis.call('HGET', KEYS[2], 'generation') ~= ARGV[3] then return {'generation'} end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return {'idTaken'} end
local mine = ARGV[4]
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local theirs = prefixOf(all[i], all[i + 1])
  if mine ~= '' and theirs ~= '' and (string.sub(mine, 1, #theirs) == theirs or string.sub(theirs, 1, #mine) == mine) then
    return {'prefixTaken', all[i], theirs}
  end
end
if #all / 2 >= tonumber(ARGV[5]) then return {'full'} end
local v = redis.call('HINCRBY', KEYS[2], 'version', 1)
redis.call('HSET', KEYS[1], ARGV[1], '{"version":' .. v .. ',' .. ARGV[2])
redis.call('SREM', KEYS[3], ARGV[1])
return {'created', v}`;

/** ARGV: id, expected version, tail, generation. → {replaced, v} | {missing} | {changed, v} | {generation}. */
export const REPLACE = `${PREFIX_OF}
if redis.call('HGET', KEYS[2], 'generation') ~= ARGV[4] then return {'generation'} end
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return {'missing'} end
local current = versionOf(raw)
if current ~= tonumber(ARGV[2]) then return {'changed', current} end
local v = redis.call('HINCRBY', KEYS[2], 'version', 1)
redis.call('HSET', KEYS[1], ARGV[1], '{"version":' .. v .. ',' .. ARGV[3])
return {'replaced', v}`;

/**
 * ARGV: id, expected version ("" for any), generation, how long the deletion is remembered
 * (ms). → {removed} | {missing} | {changed, v} | {generation}.
 */
export const REMOVE = `${PREFIX_OF}
if redis.call('HGET', KEYS[2], 'generation') ~= ARGV[3] then return {'generation'} end
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return {'missing'} end
if ARGV[2] ~= '' then
  local current = versionOf(raw)
  if current ~= tonumber(ARGV[2]) then return {'changed', current} end
end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
return {'removed'}`;

/**
 * ARGV: the generation the records were read under ("" none), a new generation for a store
 * without one, the highest version the replica has seen, then (id, JSON) per record.
 * Writes a missing marker, then each record whose id is neither stored nor deleted since, and
 * raises the version counter above every version written back (versions are never reused).
 * → {generation, written}.
 */
export const SEED = `
local gen = redis.call('HGET', KEYS[2], 'generation')
if gen and gen == ARGV[1] then return {gen, 0} end
if not gen then
  gen = ARGV[2]
  redis.call('HSET', KEYS[2], 'generation', gen)
end
local top = tonumber(redis.call('HGET', KEYS[2], 'version') or '0')
if tonumber(ARGV[3]) > top then top = tonumber(ARGV[3]) end
local written = 0
for i = 4, #ARGV, 2 do
  if redis.call('SISMEMBER', KEYS[3], ARGV[i]) == 0 and redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) == 1 then
    written = written + 1
  end
end
redis.call('HSET', KEYS[2], 'version', top)
return {gen, written}`;
