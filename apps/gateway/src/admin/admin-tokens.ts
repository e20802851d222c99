/** DI tokens of the admin module. */
export const REGISTRATION_STORE = Symbol('REGISTRATION_STORE');
export const UPSTREAM_ADDRESS_GUARD = Symbol('UPSTREAM_ADDRESS_GUARD');
