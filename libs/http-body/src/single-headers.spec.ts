import { SingleHeaders } from './single-headers';

describe('SingleHeaders: names a request may carry at most once', () => {
  const single = new SingleHeaders(['Host', 'authorization']);

  it('names the first one repeated, whatever the case of its lines', () => {
    expect(single.repeatedIn(['Host', 'a', 'X-Other', '1', 'host', 'b'])).toBe('host');
    expect(single.repeatedIn(['Authorization', 'Bearer a', 'AUTHORIZATION', 'Bearer b'])).toBe(
      'authorization',
    );
  });

  it('passes each once, and others repeated (node:http joins those)', () => {
    expect(
      single.repeatedIn(['Host', 'a', 'Authorization', 'b', 'Accept', 'x', 'accept', 'y']),
    ).toBeUndefined();
    expect(single.repeatedIn([])).toBeUndefined();
  });
});

describe('SingleHeaders with prefixes', () => {
  const single = new SingleHeaders(['host'], ['Mcp-Param-']);

  it('names a header of a prefix sent twice, whatever the case, and any length', () => {
    const long = `mcp-param-${'r'.repeat(64)}`;
    expect(single.repeatedIn(['Mcp-Param-Region', 'a', 'MCP-PARAM-REGION', 'b'])).toBe(
      'mcp-param-region',
    );
    expect(single.repeatedIn([long, 'a', long.toUpperCase(), 'b'])).toBe(long);
  });

  it('passes two different names of a prefix, and the bare prefix is none of them', () => {
    expect(
      single.repeatedIn([
        'Mcp-Param-A',
        '1',
        'Mcp-Param-B',
        '2',
        'mcp-param-',
        'x',
        'Mcp-Param-',
        'y',
      ]),
    ).toBeUndefined();
  });
});
