import { shownUrl } from './shown-url';

describe('shownUrl', () => {
  it('cuts the query and fragment, parsable or not', () => {
    expect(shownUrl('mcp.example.com/mcp?api_key=SECRET')).toBe('"mcp.example.com/mcp?…"');
    expect(shownUrl('https://h.example/p?k=SECRET#f')).toBe('"https://h.example/p?…"');
    expect(shownUrl('ftp://h.example/p#SECRET')).toBe('"ftp://h.example/p#…"');
  });

  it('masks the userinfo, with or without a scheme', () => {
    expect(shownUrl('https://user:SECRET@h.example/p')).toBe('"https://…@h.example/p"');
    expect(shownUrl('user:SECRET@h.example/p')).toBe('"…@h.example/p"');
    expect(shownUrl('https://h.example/a@b')).toBe('"https://h.example/a@b"');
  });

  it('bounds a long value', () => {
    const shown = JSON.parse(shownUrl(`https://h.example/${'a'.repeat(200)}`)) as string;
    expect(shown.length).toBe(80);
    expect(shown.endsWith('…')).toBe(true);
  });
});
