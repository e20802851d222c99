import { asLegacyResult } from './legacy-result';

describe('asLegacyResult: a 2026 upstream result as a 2025 client sees it', () => {
  it('drops resultType "complete", the cache hints and the upstream serverInfo; keeps the rest', () => {
    expect(
      asLegacyResult({
        content: [{ type: 'text', text: '42' }],
        structuredContent: { sum: 42 },
        isError: false,
        resultType: 'complete',
        ttlMs: 0,
        cacheScope: 'private',
        _meta: {
          'io.modelcontextprotocol/serverInfo': { name: 'calc', version: '2.0.0' },
          'example.com/trace': 'abc',
        },
      }),
    ).toEqual({
      content: [{ type: 'text', text: '42' }],
      structuredContent: { sum: 42 },
      isError: false,
      _meta: { 'example.com/trace': 'abc' },
    });
  });

  it('leaves out a _meta that held only the serverInfo', () => {
    expect(
      asLegacyResult({
        contents: [],
        resultType: 'complete',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'calc', version: '2' } },
      }),
    ).toEqual({ contents: [] });
  });

  it('returns a 2025 result as it is', () => {
    const result = { content: [], _meta: { progressToken: 1 } };
    expect(asLegacyResult(result)).toBe(result);
  });

  it('keeps a resultType that is not "complete"', () => {
    expect(asLegacyResult({ resultType: 'input_required', inputRequests: {} })).toEqual({
      resultType: 'input_required',
      inputRequests: {},
    });
  });
});
