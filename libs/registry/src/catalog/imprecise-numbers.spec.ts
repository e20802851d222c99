import { impreciseNumbers, neighbours } from './imprecise-numbers';

describe('impreciseNumbers: what a double does not hold as the text writes it', () => {
  it('finds numbers with digits or an exponent a double drops, with their paths', () => {
    const json =
      '{"a":1.00000000000000000001,"b":[0.1,9007199254740993,{"c":1e400}],"d":"12345678901234567890","e":-1e-400}';
    expect(impreciseNumbers(json, 16)).toEqual([
      { path: ['a'], text: '1.00000000000000000001', value: 1, fractional: true },
      { path: ['b', 1], text: '9007199254740993', value: 9007199254740992, fractional: false },
      { path: ['b', 2, 'c'], text: '1e400', value: Infinity, fractional: false },
      { path: ['e'], text: '-1e-400', value: -0, fractional: true },
    ]);
  });

  it('leaves numbers a double holds, however they are written', () => {
    for (const json of [
      '{"n":0.1,"m":123456789012345,"k":1.5e300,"z":-0,"x":100000000000000000000,"y":0.000000000000000001}',
      '{"n":12345678.901234567}', // 17 digits, and the double's shortest form
      '{"s":"1.00000000000000000001","t":"x\\"1.00000000000000000001"}',
      '[1.0, 2.50, 3e0, 4E+1]',
    ])
      expect(impreciseNumbers(json, 16)).toEqual([]);
  });

  it('stops after one more than the limit', () => {
    const json = `[${Array.from({ length: 40 }, () => '0.12345678901234567891').join(',')}]`;
    expect(impreciseNumbers(json, 3)).toHaveLength(4);
  });

  it('reads escaped member names and keeps array indices across nesting', () => {
    const json = '{"\\u0061/b":[[1],[2,{"k":0.12345678901234567891}]]}';
    expect(impreciseNumbers(json, 16).map((n) => n.path)).toEqual([['a/b', 1, 1, 'k']]);
  });

  it('gives the doubles on either side of a value', () => {
    expect(neighbours(1)).toEqual([1 - Number.EPSILON / 2, 1 + Number.EPSILON]);
    expect(neighbours(-1)).toEqual([-1 - Number.EPSILON, -1 + Number.EPSILON / 2]);
    expect(neighbours(0)).toEqual([-Number.MIN_VALUE, Number.MIN_VALUE]);
    expect(neighbours(2 ** 53)).toEqual([2 ** 53 - 1, 2 ** 53 + 2]);
  });
});
