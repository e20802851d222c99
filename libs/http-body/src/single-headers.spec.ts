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
