export { RegistrationsModule } from './registrations.module';
export { RegistrationSync } from './registration-sync.service';
export type { Known } from './applied-registrations';
export type { RegistrationStoreStatus, StoredRegistration } from './registration-record';
export type { StoreUnavailable } from './registration-store-reader';
export {
  MemoryRegistrationStore,
  type NewRegistration,
  type RegistrationStore,
} from './registration-store';
export { RedisRegistrationStore } from './redis-registration-store';
export { DELETION_MEMORY_MAX, DELETION_MEMORY_MS } from './registration-tombstones';
export { UpstreamAddressGuard } from './upstream-address-guard';
