import { repeatedSingleHeader } from './repeated-headers';

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
