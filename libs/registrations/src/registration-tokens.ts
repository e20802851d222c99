/** DI tokens of RegistrationsModule: the store of runtime registrations and the address guard every write passes. */
export const REGISTRATION_STORE = Symbol('REGISTRATION_STORE');
export const UPSTREAM_ADDRESS_GUARD = Symbol('UPSTREAM_ADDRESS_GUARD');
