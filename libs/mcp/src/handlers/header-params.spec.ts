import type { CatalogTool } from '@app/registry';
import { headerParamsOf, paramHeaderMismatch, paramHeadersFor } from './header-params';

const sqlTool = (): CatalogTool =>
  ({
    name: 'execute_sql',
    publishedJson: JSON.stringify({
      name: 'execute_sql',
      inputSchema: {
        type: 'object',
        properties: {
          region: { type: 'string', 'x-mcp-header': 'Region' },
          limit: { type: 'integer', 'x-mcp-header': 'Limit' },
          dryRun: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
          query: { type: 'string' },
        },
      },
    }),
  }) as unknown as CatalogTool;
const b64 = (text: string): string => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;

describe('Mcp-Param-* headers for x-mcp-header arguments (wire notes §1.2, §9.2)', () => {
  it('finds the mirrored arguments of a schema, and none in a schema without x-mcp-header', () => {
    expect(headerParamsOf(sqlTool())).toEqual([
      { argument: 'region', name: 'Region' },
      { argument: 'limit', name: 'Limit' },
      { argument: 'dryRun', name: 'Dry-Run' },
    ]);
    const plain = { publishedJson: '{"name":"t","inputSchema":{"type":"object"}}' };
    expect(headerParamsOf(plain as unknown as CatalogTool)).toEqual([]);
  });

  it('headers equal to the arguments pass: strings as they are, integers numerically, booleans as true/false', () => {
    expect(
      paramHeaderMismatch(
        sqlTool(),
        { region: 'us-west1', limit: 42, dryRun: false, query: 'select 1' },
        { 'mcp-param-region': 'us-west1', 'mcp-param-limit': '42.0', 'mcp-param-dry-run': 'false' },
      ),
    ).toBeUndefined();
  });

  it('a non-ASCII value travels as a canonical base64 sentinel', () => {
    expect(
      paramHeaderMismatch(sqlTool(), { region: 'Zürich ' }, { 'mcp-param-region': b64('Zürich ') }),
    ).toBeUndefined();
  });

  it.each<[string, Record<string, unknown>, Record<string, string>, string]>([
    ['absent', { region: 'us-west1' }, {}, 'absent'],
    ['different', { region: 'us-west1' }, { 'mcp-param-region': 'eu-west1' }, 'differs'],
    ['in another case', { region: 'us-west1' }, { 'mcp-param-region': 'US-WEST1' }, 'differs'],
    [
      'a non-canonical sentinel',
      { region: 'echo' },
      { 'mcp-param-region': '=?base64?ZWNobw?=' },
      'Base64',
    ],
    ['a number that is not one', { limit: 42 }, { 'mcp-param-limit': '42abc' }, 'differs'],
    ['a boolean spelled otherwise', { dryRun: true }, { 'mcp-param-dry-run': 'True' }, 'differs'],
    ['present for an absent argument', {}, { 'mcp-param-region': 'us-west1' }, 'no region'],
    ['present for a null argument', { region: null }, { 'mcp-param-region': 'x' }, 'no region'],
  ])('a header %s is a -32020 mismatch naming the header', (_case, args, headers, reason) => {
    const mismatch = paramHeaderMismatch(sqlTool(), args, headers);
    expect(mismatch?.header).toMatch(/^Mcp-Param-/);
    expect(mismatch?.reason).toContain(reason);
  });

  it('a null argument needs no header', () => {
    expect(paramHeaderMismatch(sqlTool(), { region: null }, {})).toBeUndefined();
  });

  it('the headers towards a 2026 upstream mirror the present arguments, encoded as the gateway checks them', () => {
    const headers = paramHeadersFor(sqlTool(), { region: 'Zürich ', limit: 7, query: 'q' });
    expect(headers).toEqual({ 'mcp-param-region': b64('Zürich '), 'mcp-param-limit': '7' });
    expect(
      paramHeaderMismatch(sqlTool(), { region: 'Zürich ', limit: 7 }, headers ?? {}),
    ).toBeUndefined();
    expect(paramHeadersFor(sqlTool(), { query: 'q' })).toBeUndefined();
  });
});
