import { withoutLegacyToolFields } from './revision-tool-fields';

describe('withoutLegacyToolFields: a tools array as 2026-07-28 has its Tool fields', () => {
  it('drops execution and keeps everything else as it was', () => {
    const json = JSON.stringify([
      { name: 'a', inputSchema: { type: 'object' }, execution: { taskSupport: 'required' } },
      { name: 'b', inputSchema: { type: 'object' }, _meta: { execution: 'kept in _meta' } },
    ]);
    expect(JSON.parse(withoutLegacyToolFields(json))).toEqual([
      { name: 'a', inputSchema: { type: 'object' } },
      { name: 'b', inputSchema: { type: 'object' }, _meta: { execution: 'kept in _meta' } },
    ]);
  });

  it('returns a list without execution unchanged, the same string', () => {
    const json = '[{"name":"a","inputSchema":{"type":"object"}}]';
    expect(withoutLegacyToolFields(json)).toBe(json);
  });
});
