import { unknownResultType } from './result-types';

describe('unknownResultType: a resultType the gateway does not know is an invalid answer', () => {
  it('passes none and the known ones', () => {
    expect(unknownResultType({ content: [] })).toBeUndefined();
    for (const known of ['complete', 'input_required', 'task'])
      expect(unknownResultType({ resultType: known })).toBeUndefined();
  });

  it('names any other value, of any type', () => {
    expect(unknownResultType({ resultType: 'bogus' })).toBe('"bogus"');
    expect(unknownResultType({ resultType: 5 })).toBe('5');
    expect(unknownResultType({ resultType: null })).toBe('null');
    expect(unknownResultType({ resultType: 'x'.repeat(100) })).toHaveLength(40);
  });
});
