import type { CallerAccess } from '@app/identity';
import type { CatalogTool, RegistryService } from '@app/registry';
import { ToolsCallHandler } from './tools-call.handler';

/** A tool of upstream `db` whose `region` argument is mirrored in `Mcp-Param-Region`. */
const sqlTool = {
  name: 'db__execute_sql',
  sourceId: 'db',
  route: { kind: 'upstream' },
  publishedJson: JSON.stringify({
    name: 'db__execute_sql',
    inputSchema: {
      type: 'object',
      properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
    },
  }),
} as unknown as CatalogTool;

function handler(): ToolsCallHandler {
  const registry = {
    current: () => ({ get: (n: string) => (n === sqlTool.name ? sqlTool : undefined) }),
  };
  const live = { ownerOf: () => undefined };
  return new ToolsCallHandler(
    registry as unknown as RegistryService,
    ...([undefined, undefined, live, undefined, undefined, undefined, undefined] as unknown as [
      never,
      never,
      never,
      never,
      never,
      never,
      never,
    ]),
  );
}

describe('ToolsCallHandler.prepare and the Mcp-Param-* check', () => {
  const params = { name: 'db__execute_sql', arguments: { region: 'eu' } };
  const wrongHeader = { 'mcp-param-region': 'us' };

  it('a granted tool has its Mcp-Param-* headers checked (-32020 on a mismatch)', () => {
    const h = handler();
    const prepared = h.prepare(params, undefined);
    expect(prepared.mayRelay).toBe(true);
    expect(h.headerMismatch(params, wrongHeader, prepared)).toBeDefined();
  });

  it('a tool outside the grant is prepared as an unknown one: no relay, its headers unchecked', () => {
    const h = handler();
    const access = {
      all: false,
      key: 'k',
      sources: new Set(['other']),
      tools: new Set(),
    } as unknown as CallerAccess;
    const prepared = h.prepare(params, access);
    expect(prepared.mayRelay).toBe(false);
    expect(prepared.target?.denied).toBe(true);
    expect(h.headerMismatch(params, wrongHeader, prepared)).toBeUndefined();
  });
});
