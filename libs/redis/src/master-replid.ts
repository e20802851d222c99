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
