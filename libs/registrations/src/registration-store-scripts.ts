import { LOST_RANGES_LUA, MASTER_REPLID_LUA } from '@app/redis';

/**
 * The Lua scripts of RedisRegistrationStore. Each runs atomically in Redis, so a check and the
 * write it guards cannot interleave with another replica's (the compare-and-set of
 * docs/operations.md §15 "Shared and durable").
 *
 * KEYS[1] is the registrations hash (field = upstream id, value = record JSON), KEYS[2] the meta
 * hash (`generation`: the store's marker; `version`: the counter every write draws its version
 * from; `master`: the master that wrote last; `ranges`: the versions failovers to the last
 * masters may have lost, and `floor`, `ceiling` the last of them, ON_MASTER), KEYS[3] the tombstones hash (field = an id deleted lately, value
 * `<version>:<ms>`: the version of the record deleted and when, kept DELETION_MEMORY_MS and
 * DELETION_MEMORY_MAX of registration-tombstones.ts), KEYS[4] the ids whose record or tombstone a re-seed wrote (and
 * no write since): those a replica that re-seeds later may still replace by the merge rule
 * (registration-tombstones.ts `supersedes`); every other one was written since the store was
 * reset, after anything a late replica knows, and stays. A record is written as
 * `{"version":<n>,` followed by the caller's JSON without its opening brace (ARGV "tail"):
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
-- the audience a record claims: the key its writer stored (registrationAudienceKey); for a
-- record written before keys were stored, its audience trimmed (an exact spelling still clashes)
local function audienceOf(raw)
  local ok, r = pcall(cjson.decode, raw)
  if not ok or type(r) ~= 'table' then return nil end
  if type(r.audienceKey) == 'string' then return r.audienceKey end
  local u = r.upstream
  if type(u) == 'table' and type(u.authorization) == 'table' and type(u.authorization.audience) == 'string' then
    return (string.gsub(u.authorization.audience, '^%s*(.-)%s*$', '%1'))
  end
  return nil
end
local function versionOf(raw)
  local ok, r = pcall(cjson.decode, raw)
  if ok and type(r) == 'table' and type(r.version) == 'number' then return r.version end
  return 0
end
`;

/**
 * Each write first notes which master it runs on (its replication id, a new one after a failover
 * or a restart). On a master other than the one that wrote last, the counter that came over may
 * be below versions the old master handed out in writes that never reached this one
 * (asynchronous replication): drawing on from it would hand such a version out again, to another
 * registration, and an If-Match or ETag of the lost write would match it. So the counter is
 * raised past them (by a million, more writes than a failover can lose, or to the time in ms
 * if that is more), and the range the lost writes drew from (the counter as it came over to the
 * counter raised) is added to `ranges`, which keeps the last masters' (LOST_RANGES_LUA in
 * @app/redis): a restore writes a record the store lacks back when its version is in one
 * (SEED), even after a second failover came before every replica had restored what the first
 * lost. `floor` and `ceiling` keep the last range too, for a gateway that reads only those
 * (docs/operations.md §5 "What a failover may lose"). The first write that notes a master (a new
 * store, or one from before this) has no previous one to compare: nothing is raised. Redis may
 * refuse INFO to the user (ACL without @dangerous): then nothing is noted and a restore keeps
 * to the counter alone, as before.
 */
const ON_MASTER = `${MASTER_REPLID_LUA}${LOST_RANGES_LUA}
local function keptRanges()
  local meta = redis.call('HMGET', KEYS[2], 'ranges', 'floor', 'ceiling')
  return lostRangesOf(meta[1], meta[2], meta[3])
end
local function onMaster(now)
  local id = masterReplid()
  if not id then return end
  local was = redis.call('HGET', KEYS[2], 'master')
  if was == id then return end
  local counter = tonumber(redis.call('HGET', KEYS[2], 'version') or '0')
  local raised = counter
  if was then
    raised = raisedPast(counter, now)
    redis.call('HSET', KEYS[2], 'ranges', lostRangesAdd(keptRanges(), counter, raised))
  end
  redis.call('HSET', KEYS[2], 'master', id, 'floor', string.format('%d', counter),
    'ceiling', string.format('%d', raised), 'version', string.format('%d', raised))
end
`;

/** Tombstones: the version of one; dropping the expired ones and the oldest beyond the bound. */
const TOMBSTONES = `
local function tombVersion(raw)
  return tonumber(string.match(raw, '^(%d+):') or '0')
end
local function pruneTombstones(now, ttl, max)
  local all = redis.call('HGETALL', KEYS[3])
  local kept = {}
  for i = 1, #all, 2 do
    local at = tonumber(string.match(all[i + 1], ':(%d+)$') or '0')
    if at < now - ttl then redis.call('HDEL', KEYS[3], all[i]) else kept[#kept + 1] = {all[i], at} end
  end
  if #kept > max then
    table.sort(kept, function(x, y) return x[2] < y[2] end)
    for i = 1, #kept - max do redis.call('HDEL', KEYS[3], kept[i][1]) end
  end
  if #kept > 0 then redis.call('PEXPIRE', KEYS[3], ttl) end
end
`;

/**
 * ARGV: id, tail, generation, prefix, maxRegistrations, the tokenExchange audience as compared
 * ("" none; registrationAudienceKey), now (ms). → {created, version} | {idTaken} |
 * {prefixTaken, id, prefix} | {audienceTaken, id} | {full} | {generation}. The prefix rule is
 * upstreamProblems' (equal, or one starts with the other; "" is checked by the sole-source rule
 * beforehand); the audience is taken once, like the id and the prefix: a replica that has not
 * read the registration holding it yet cannot hand it to another (docs/security.md "Runtime
 * registrations").
 */
export const CREATE = `${PREFIX_OF}${ON_MASTER}
if redis.call('HGET', KEYS[2], 'generation') ~= ARGV[3] then return {'generation'} end
onMaster(tonumber(ARGV[7]))
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return {'idTaken'} end
local mine = ARGV[4]
local audience = ARGV[6]
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local theirs = prefixOf(all[i], all[i + 1])
  if mine ~= '' and theirs ~= '' and (string.sub(mine, 1, #theirs) == theirs or string.sub(theirs, 1, #mine) == mine) then
    return {'prefixTaken', all[i], theirs}
  end
  if audience ~= '' and audienceOf(all[i + 1]) == audience then return {'audienceTaken', all[i]} end
end
if #all / 2 >= tonumber(ARGV[5]) then return {'full'} end
local v = redis.call('HINCRBY', KEYS[2], 'version', 1)
redis.call('HSET', KEYS[1], ARGV[1], '{"version":' .. v .. ',' .. ARGV[2])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
return {'created', v}`;

/**
 * ARGV: id, expected version, tail, generation, now (ms).
 * → {replaced, v} | {missing} | {changed, v} | {generation}.
 */
export const REPLACE = `${PREFIX_OF}${ON_MASTER}
if redis.call('HGET', KEYS[2], 'generation') ~= ARGV[4] then return {'generation'} end
onMaster(tonumber(ARGV[5]))
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return {'missing'} end
local current = versionOf(raw)
if current ~= tonumber(ARGV[2]) then return {'changed', current} end
local v = redis.call('HINCRBY', KEYS[2], 'version', 1)
redis.call('HSET', KEYS[1], ARGV[1], '{"version":' .. v .. ',' .. ARGV[3])
redis.call('HDEL', KEYS[4], ARGV[1])
return {'replaced', v}`;

/**
 * ARGV: id, expected version ("" for any), generation, how long a deletion is remembered (ms),
 * how many at most, now (ms). Leaves a tombstone of the version removed.
 * → {removed, v} | {missing} | {changed, v} | {generation}.
 */
export const REMOVE = `${PREFIX_OF}${TOMBSTONES}${ON_MASTER}
if redis.call('HGET', KEYS[2], 'generation') ~= ARGV[3] then return {'generation'} end
onMaster(tonumber(ARGV[6]))
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return {'missing'} end
local current = versionOf(raw)
if ARGV[2] ~= '' and current ~= tonumber(ARGV[2]) then return {'changed', current} end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], string.format('%d', current) .. ':' .. ARGV[6])
redis.call('HDEL', KEYS[4], ARGV[1])
pruneTombstones(tonumber(ARGV[6]), tonumber(ARGV[4]), tonumber(ARGV[5]))
return {'removed', current}`;

/**
 * ARGV: the generation the entries were read under ("" none), a new generation for a store
 * without one, how long a deletion is remembered (ms), how many at most, now (ms), the mode
 * ("reset" | "restore"), then per id (id, version, "live" | "dead", the record's JSON | the
 * deletion's time in ms).
 * reset (the store lost its marker, or another replica re-seeded it): writes a missing marker,
 * then merges each entry: an id the store holds neither a record nor a tombstone of is
 * written; one a re-seed wrote (KEYS[4]) is replaced when the entry supersedes it (the higher
 * version; a tombstone beats a record of the same version); one written since the reset stays.
 * restore (the same marker on a new master: a failover may have lost the last writes): an
 * entry that supersedes what the store holds is written, and one it lacks only when its
 * version is one a lost write drew: above the store's counter, or in a range the counter was
 * raised over when this master or one of the last before it took over (ON_MASTER: writes on
 * them drew above it, so none can hold such a version); one elsewhere was deleted, its tombstone
 * perhaps expired. Nothing else changes.
 * The version counter is raised above every version given, and a store without a marker (new,
 * or one that lost everything, counter included: a replica cannot tell them apart) counts on from
 * now in ms, above any version another replica may have drawn before: versions are never reused.
 * → {generation, records written, records removed}.
 */
export const SEED = `${PREFIX_OF}${TOMBSTONES}${ON_MASTER}
local gen = redis.call('HGET', KEYS[2], 'generation')
local restore = ARGV[6] == 'restore'
if restore and gen ~= ARGV[1] then return {gen or '', 0, 0} end
if gen and gen == ARGV[1] and not restore then return {gen, 0, 0} end
-- lost: no marker. A replica that never read one cannot tell a new store from one that lost its
-- data (another replica may have drawn versions from it before), so a missing marker is a loss
local lost = not gen
if not gen then
  gen = ARGV[2]
  redis.call('HSET', KEYS[2], 'generation', gen)
end
onMaster(tonumber(ARGV[5]))
local ttl = tonumber(ARGV[3])
local top = tonumber(redis.call('HGET', KEYS[2], 'version') or '0')
-- a store that lost everything lost its counter too, and the seeding replica knows only the
-- versions it applied: another replica may have handed out higher ones just before (or all of
-- them, to a replica started since). The counter starts again from the time in ms, above any
-- version drawn before (one a write), so a version read before the loss — an If-Match, or the
-- compare-and-set of a write retried after its replica re-seeded — never matches a registration
-- made after it
if lost and tonumber(ARGV[5]) > top then top = tonumber(ARGV[5]) end
-- a write a failover lost drew a version above the counter the new master came over with (the
-- counter replicates with each write): above the counter now if nothing was written since, else
-- in a range the first write on this master, or on one of the last masters before it, raised
-- the counter over (ON_MASTER), which no write on them drew from; an id anywhere else that the
-- store lacks was deleted
local top0 = top
local ranges = keptRanges()
local function lostWrite(v)
  return v > top0 or inLostRanges(v, ranges)
end
local written, removed = 0, 0
for i = 7, #ARGV, 4 do
  local id, v, kind, payload = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3]
  if v > top then top = v end
  local has, dead, sv = false, false, 0
  local raw = redis.call('HGET', KEYS[1], id)
  if raw then
    has, sv = true, versionOf(raw)
  else
    local t = redis.call('HGET', KEYS[3], id)
    if t then has, dead, sv = true, true, tombVersion(t) end
  end
  local take
  if not has then take = not restore or lostWrite(v)
  elseif not restore and redis.call('HEXISTS', KEYS[4], id) == 0 then take = false
  else take = v > sv or (v == sv and kind == 'dead' and not dead) end
  if take then
    if kind == 'live' then
      redis.call('HSET', KEYS[1], id, payload)
      redis.call('HDEL', KEYS[3], id)
      written = written + 1
    else
      if has and not dead then
        redis.call('HDEL', KEYS[1], id)
        removed = removed + 1
      end
      redis.call('HSET', KEYS[3], id, ARGV[i + 1] .. ':' .. payload)
    end
    if not restore then redis.call('HSET', KEYS[4], id, '1') end
  end
end
redis.call('HSET', KEYS[2], 'version', string.format('%d', top))
if redis.call('EXISTS', KEYS[4]) == 1 then redis.call('PEXPIRE', KEYS[4], ttl) end
pruneTombstones(tonumber(ARGV[5]), ttl, tonumber(ARGV[4]))
return {gen, written, removed}`;
