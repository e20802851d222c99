/**
 * What the operator may do (docs/console.md "Access"): writes through /admin need the admin role.
 * Without an accepted token, or with /admin disabled, the console is read-only.
 */
export type AdminAccess =
  { readonly kind: 'writable' } | { readonly kind: 'read-only'; readonly reason: string };

export const READ_ONLY_NO_TOKEN: AdminAccess = {
  kind: 'read-only',
  reason: 'Read-only: enter the admin token to register, enable, disable or delete upstreams.',
};
