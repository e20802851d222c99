/**
 * Sets `key` on `target` as an own, enumerable member, as JSON.parse makes every member of a
 * message. `target[key] = value` would not for `__proto__`: it sets the object's prototype to a
 * value a client or an upstream wrote, so the member is not written out again and its members
 * seem to be the object's own.
 */
export function setOwnMember(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}
