export { RegistrationsModule } from './registrations.module';
export { RegistrationSync } from './registration-sync.service';
export type { Known } from './applied-registrations';
export type { RegistrationStoreStatus } from './registration-record';
export type { NewRegistration } from './registration-store';
export { RedisRegistrationStore } from './redis-registration-store';
export { DELETION_MEMORY_MAX, DELETION_MEMORY_MS } from './registration-tombstones';
