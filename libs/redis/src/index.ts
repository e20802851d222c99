export {
  openRedis,
  QUIT_WAIT_MS,
  quitRedis,
  redisConstruction,
  redisFailureText,
  redisOutcomeUnknown,
  type RedisClient,
  type RedisConstruction,
  type RedisUseOptions,
} from './redis-client';
export { onClusterFailover } from './cluster-failover';
export { markClosing } from './sentinel-revival';
export { redisUseOptions, type RedisUse } from './redis-uses';
export { BREAKER_FIRST_RETRY_MS, BREAKER_MAX_RETRY_MS, RedisBreaker } from './redis-breaker';
export { StoreAttempts, type StoreLog } from './store-attempts';
export {
  LOST_RANGES_KEPT,
  LOST_RANGES_LUA,
  MASTER_REPLID_LUA,
  MasterReplidReply,
} from './master-replid';
export { STORED_RECORD_ROOM, storedJsonLimit } from './stored-json';
