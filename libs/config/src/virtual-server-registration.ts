import { plainToInstance } from 'class-transformer';
import { validateSync } from './class-validator';
import { virtualServerProblems } from './config-rules';
import { renderProblem } from './config-problem';
import { flattenValidationErrors } from './load-config';
import type { McpConfig } from './mcp-config.model';
import { VirtualServerConfig } from './virtual-servers-config.model';

/**
 * The outcome of checking a virtual server to register at runtime (docs/operations.md §16
 * "Registered at runtime"): the server, or the problems, each naming the body field.
 * `conflict`: the id is a configured or registered server's already (409).
 */
export type VirtualServerCheck =
  | { readonly ok: true; readonly server: VirtualServerConfig }
  | { readonly ok: false; readonly conflict: boolean; readonly problems: readonly string[] };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks a virtual server to register with the boot rules: the field decorators of
 * `mcp.virtualServers[]`, a view that can hold a tool, selection only with search; `takenIds`
 * are the servers configured and registered already (the one being replaced left out).
 * Never throws.
 */
export function checkVirtualServer(
  body: unknown,
  mcp: Pick<McpConfig, 'virtualServers'>,
  takenIds: ReadonlySet<string>,
): VirtualServerCheck {
  if (!isRecord(body))
    return {
      ok: false,
      conflict: false,
      problems: ['body: must be a JSON object with the fields of an mcp.virtualServers[] entry'],
    };
  const server = plainToInstance(VirtualServerConfig, body, { exposeDefaultValues: true });
  const problems = flattenValidationErrors(
    validateSync(server, { whitelist: true, forbidNonWhitelisted: true }),
    '',
  ).map(renderProblem);
  // the rules across fields read fields of the right types only
  if (problems.length === 0) problems.push(...virtualServerProblems(server, '').map(renderProblem));
  if (problems.length > 0) return { ok: false, conflict: false, problems };
  if (takenIds.has(server.id))
    return {
      ok: false,
      conflict: true,
      problems: [
        `id: "${server.id}" is ${mcp.virtualServers.some((s) => s.id === server.id) ? 'a configured' : 'a registered'} virtual server's`,
      ],
    };
  return { ok: true, server };
}
