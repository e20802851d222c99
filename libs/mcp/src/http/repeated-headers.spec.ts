import { RepeatedHeaders } from './repeated-headers';

const fixed = new RepeatedHeaders();
const repeatedSingleHeader = (raw: readonly string[]): string | undefined => fixed.repeatedIn(raw);

describe('repeatedSingleHeader: caller headers and Authorization arrive at most once', () => {
  it.each([
    'guid',
    'x-request-id',
    'mcp-session-id',
    'employee-no',
    'virtual-employee-no',
    'authorization',
  ])('finds %s sent twice, whatever the case', (name) => {
    expect(
      repeatedSingleHeader([
        'Host',
        'a',
        name.toUpperCase(),
        'E12345',
        'Accept',
        '*/*',
        name,
        'ADMIN',
      ]),
    ).toBe(name);
  });

  it('accepts each of them once, and repeats of other headers', () => {
    expect(
      repeatedSingleHeader([
        'guid',
        'g',
        'x-request-id',
        'r',
        'mcp-session-id',
        's',
        'employee-no',
        'e',
        'virtual-employee-no',
        'v',
        'authorization',
        'Bearer t',
        'accept',
        'a',
        'accept',
        'b',
        'x-forwarded-for',
        '1',
        'x-forwarded-for',
        '2',
      ]),
    ).toBeUndefined();
  });

  it('does not mistake a value with a comma for a repeat', () => {
    expect(repeatedSingleHeader(['employee-no', 'E1, E2'])).toBeUndefined();
  });
});

describe('RepeatedHeaders: the headers a source forwards arrive at most once too', () => {
  it('finds a forwarded header and an Mcp-Param-* header sent twice, whatever the case', () => {
    const headers = new RepeatedHeaders(() => new Set(['x-tenant']));
    expect(headers.repeatedIn(['X-Tenant', 'acme', 'x-tenant', 'globex'])).toBe('x-tenant');
    expect(headers.repeatedIn(['Mcp-Param-Region', 'a', 'mcp-param-region', 'b'])).toBe(
      'mcp-param-region',
    );
    expect(
      headers.repeatedIn(['X-Tenant', 'acme', 'X-Other', '1', 'X-Other', '2']),
    ).toBeUndefined();
  });

  it('follows the forwarded names when they change, and rebuilds only then', () => {
    let names: ReadonlySet<string> = new Set(['x-tenant']);
    const headers = new RepeatedHeaders(() => names);
    const twice = ['X-Region', 'eu', 'X-Region', 'us'];
    expect(headers.repeatedIn(twice)).toBeUndefined();
    names = new Set(['x-tenant', 'x-region']);
    expect(headers.repeatedIn(twice)).toBe('x-region');
    // the fixed ones stay whatever is forwarded
    names = new Set();
    expect(headers.repeatedIn(['employee-no', 'E1', 'Employee-No', 'E2'])).toBe('employee-no');
    expect(headers.repeatedIn(twice)).toBeUndefined();
  });
});
