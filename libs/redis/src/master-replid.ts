/**
 * A Lua function for the prelude of a store's write scripts: `masterReplid()`, the replication
 * id of the master the script runs on (INFO replication: a new one after a failover or a
 * restart, docs/operations.md §5 "What a failover may lose"), or nil where Redis refuses INFO to
 * the user (an ACL without @dangerous): the store then works without noting masters.
 */
export const MASTER_REPLID_LUA = `
local function masterReplid()
  local ok, info = pcall(redis.call, 'INFO', 'replication')
  if not ok or type(info) ~= 'string' then return nil end
  return string.match(info, 'master_replid:(%w+)')
end
`;

/** How many masters' lost ranges a store keeps (LOST_RANGES_LUA). */
export const LOST_RANGES_KEPT = 8;

/**
 * Lua functions for the prelude of a store's write scripts, beside MASTER_REPLID_LUA: the
 * version ranges writes lost in failovers may have drawn from. On a master other than the one
 * that wrote last, a store raises its version counter past what the old master may have handed
 * out in writes that never reached this one (`raisedPast`), and keeps the range raised over
 * (`floor`, the counter as it came over, to `ceiling`, the counter raised). A write-back of a
 * record the store lacks is a lost write when its version is in one of the kept ranges (no
 * write on a later master drew from them), else a deletion (docs/operations.md §5 "What a
 * failover may lose"). The ranges of the last LOST_RANGES_KEPT masters are kept, oldest first,
 * as "f1:c1,f2:c2,…": a second failover before every replica wrote back what the first lost
 * must not turn the first range's records into deleted ones.
 */
export const LOST_RANGES_LUA = `
local function raisedPast(counter, now)
  return math.max(counter + 1000000, now)
end
-- the kept ranges, and the last one in floor/ceiling where a store has those: written before
-- lists were kept, or by a gateway that writes only those
local function lostRangesOf(kept, floor, ceiling)
  kept = kept or ''
  floor, ceiling = tonumber(floor or ''), tonumber(ceiling or '')
  if floor and ceiling and ceiling > floor then
    local last = string.format('%d:%d', floor, ceiling)
    if not string.find(',' .. kept .. ',', ',' .. last .. ',', 1, true) then
      if kept == '' then kept = last else kept = kept .. ',' .. last end
    end
  end
  return kept
end
local function lostRangesAdd(kept, floor, ceiling)
  local list = {}
  for range in string.gmatch(kept, '[^,]+') do list[#list + 1] = range end
  list[#list + 1] = string.format('%d:%d', floor, ceiling)
  while #list > ${LOST_RANGES_KEPT} do table.remove(list, 1) end
  return table.concat(list, ',')
end
local function inLostRanges(v, kept)
  for f, c in string.gmatch(kept, '(%d+):(%d+)') do
    if v > tonumber(f) and v <= tonumber(c) then return true end
  end
  return false
end
`;

/**
 * Reads the master's replication id from the `INFO replication` reply a store's read takes in
 * its MULTI: undefined when Redis refused INFO (an ACL user without @dangerous), said once
 * through `warn` with what the store then cannot do (`lost`: what a failover lost is not
 * written back; docs/operations.md §5 "What a failover may lose").
 */
export class MasterReplidReply {
  private refused = false;

  constructor(
    private readonly warn: (text: string) => void,
    private readonly lost: string,
  ) {}

  of(reply: [Error | null, unknown] | undefined): string | undefined {
    if (reply === undefined) return undefined;
    const [err, value] = reply;
    if (err !== null) {
      if (!this.refused)
        this.warn(
          `Redis refused INFO (${err.message.slice(0, 120)}): ${this.lost} a failover lost are not written back; allow the command to this user (docs/operations.md §5)`,
        );
      this.refused = true;
      return undefined;
    }
    return typeof value === 'string' ? /^master_replid:(\w+)/m.exec(value)?.[1] : undefined;
  }
}
