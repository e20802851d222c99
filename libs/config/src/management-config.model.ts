import { IsArray, IsString } from './class-validator';

/**
 * The management listener (MANAGEMENT_PORT: /actuator, /console, /admin). Its `Host` check
 * (DNS rebinding: a page in an operator's browser that makes one of its own names resolve
 * to the gateway) is in apps/gateway/src/management/management-host-policy.ts; entry syntax
 * in management-host-patterns.ts.
 */
export class ManagementConfig {
  /**
   * Host names, besides loopback names and IP addresses (always allowed), that a request to
   * the management port may name in `Host`: `name` (any port), `name:port` or `name:*`. Empty
   * (the default): only loopback names and IP addresses.
   */
  @IsArray({ message: 'must be a list of host names ("name", "name:port" or "name:*")' })
  @IsString({ each: true, message: 'each entry must be a string' })
  allowedHosts: string[] = [];
}
