import 'reflect-metadata';
import { parseIfMatch } from './admin-upstreams.controller';

describe('If-Match of PATCH and DELETE /admin/upstreams/{id} (RFC 9110 §13.1.1)', () => {
  it('takes "*" and the versions of strong entity tags', () => {
    expect(parseIfMatch('*')).toBe('*');
    expect(parseIfMatch('"7"')).toEqual([7]);
    expect(parseIfMatch(' "7" , "9"')).toEqual([7, 9]);
  });

  it('a weak tag or a tag that is no version matches nothing (strong comparison)', () => {
    expect(parseIfMatch('W/"7"')).toEqual([]);
    expect(parseIfMatch('"abc"')).toEqual([]);
  });

  it('compares tags as text: "07" or "7.0" is not the tag "7" the port writes', () => {
    expect(parseIfMatch('"07"')).toEqual([]);
    expect(parseIfMatch('"7.0", "0"')).toEqual([0]);
    expect(parseIfMatch('"1764950000000"')).toEqual([1764950000000]);
  });

  it('anything that is no entity tag is malformed', () => {
    for (const value of ['7', 'v1', '"7', '', '*, "7"'])
      expect(parseIfMatch(value)).toBeUndefined();
  });
});
