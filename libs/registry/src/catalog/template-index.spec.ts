import {
  MAX_TEMPLATES_ONE_URI_MEETS,
  TemplateIndex,
  literalEnds,
  templateMatcher,
  templatesBeyondReach,
  uriTemplateTest,
  type UriMatcher,
} from './template-index';

/** The reference the index must agree with: every template in order, the first match wins. */
function linearFirst(patterns: readonly UriMatcher[], uri: string, end = patterns.length) {
  for (let i = 0; i < end; i++) if ((patterns[i] as UriMatcher).test(uri)) return i;
  return undefined;
}

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const EXPRESSIONS = [
  '{x}',
  '{+x}',
  '{#x}',
  '{/x}',
  '{/x,y}',
  '{/x*}',
  '{.x}',
  '{;x}',
  '{?x}',
  '{&x}',
];
const PIECES = [
  'p:',
  '//',
  'a',
  'ab',
  '/',
  'b',
  '.',
  ';',
  '?',
  '&',
  '#',
  '=',
  'x=1',
  '{',
  '}',
  '{+',
];

describe('URI templates matched without a regular expression for one expression', () => {
  it('literalEnds: the text before the first and after the last expression', () => {
    expect(literalEnds('p://r/{x}/y{?q}.json')).toEqual({ prefix: 'p://r/', suffix: '.json' });
    expect(literalEnds('p://r/plain')).toEqual({ prefix: 'p://r/plain', suffix: '' });
    expect(literalEnds('p://{x')).toEqual({ prefix: 'p://{x', suffix: '' });
  });

  it('uriTemplateTest agrees with templateMatcher on every operator and on near misses', () => {
    const next = random(7);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
    const piece = (n: number): string => Array.from({ length: n }, () => pick(PIECES)).join('');
    const disagreements: string[] = [];
    let compared = 0;
    let matched = 0;
    const compare = (
      template: string,
      uri: string,
      pattern: UriMatcher,
      test: (u: string) => boolean,
    ) => {
      const expected = pattern.test(uri);
      if (test(uri) !== expected) disagreements.push(`${template} ${uri}: ${expected}`);
      if (expected) matched++;
      compared++;
    };
    for (let i = 0; i < 400; i++) {
      const expressions = 1 + Math.floor(next() * 2);
      let template = piece(1 + Math.floor(next() * 3));
      for (let e = 0; e < expressions; e++)
        template += pick(EXPRESSIONS) + piece(Math.floor(next() * 3));
      const pattern = templateMatcher(template);
      const test = uriTemplateTest(template);
      for (let u = 0; u < 40; u++) compare(template, piece(Math.floor(next() * 9)), pattern, test);
      // and URIs that do match: the template's literal text with each expression expanded
      const expanded = template.replace(/\{([+#./;?&]?)[^}]*\}/g, (_, op: string) =>
        op === '' ? 'v' : op === '+' ? 'v/w' : `${op}v`,
      );
      compare(template, expanded, pattern, test);
    }
    expect(disagreements).toEqual([]);
    expect(compared).toBe(16_400);
    expect(matched).toBeGreaterThan(400);
  });
});

/**
 * The reading of a template as a backtracking RegExp, as the gateway once matched it: the
 * reference templateMatcher must agree with on URIs short enough for it.
 */
function regExpOf(uriTemplate: string): RegExp {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const expression = (operator: string, varList: string): string => {
    switch (operator) {
      case '+':
        return '.+';
      case '#':
        return '(?:#.*)?';
      case '/': {
        const vars = varList.split(',');
        return vars.some((v) => v.trim().endsWith('*'))
          ? '(?:/[^/?#]*)*'
          : `(?:/[^/?#]*){0,${vars.length}}`;
      }
      case '.':
        return '(?:\\.[^/?#]*)?';
      case ';':
        return '(?:;[^/?#]*)?';
      case '?':
        return '(?:\\?[^/#]*)?';
      case '&':
        return '(?:&[^/#]*)?';
      default:
        return '[^/]+';
    }
  };
  let pattern = '';
  let last = 0;
  for (const m of uriTemplate.matchAll(/\{([+#./;?&]?)([^}]*)\}/g)) {
    pattern += literal(uriTemplate.slice(last, m.index)) + expression(m[1] ?? '', m[2] ?? '');
    last = (m.index ?? 0) + m[0].length;
  }
  return new RegExp(`^${pattern}${literal(uriTemplate.slice(last))}$`, 's');
}

describe('templateMatcher in time linear in the URI and the template (templates from upstreams, URIs from any client)', () => {
  it('agrees with the RegExp reading of every template (1 to 4 expressions, every operator, adjacent ones) on URIs that match and that nearly do', () => {
    const next = random(23);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
    const piece = (n: number): string => Array.from({ length: n }, () => pick(PIECES)).join('');
    const disagreements: string[] = [];
    let matched = 0;
    for (let i = 0; i < 1500; i++) {
      let template = piece(Math.floor(next() * 3));
      const expressions = 1 + Math.floor(next() * 4);
      for (let e = 0; e < expressions; e++)
        template += pick(EXPRESSIONS) + piece(Math.floor(next() * 2));
      const reference = regExpOf(template);
      const matcher = templateMatcher(template);
      const expanded = template.replace(/\{([+#./;?&]?)[^}]*\}/g, (_, op: string) =>
        op === '' ? pick(['v', 'vw', 'a.b']) : op === '+' ? 'v/w' : op === '/' ? '/v/w' : `${op}v`,
      );
      for (const uri of [
        expanded,
        ...Array.from({ length: 30 }, () => piece(Math.floor(next() * 10))),
      ]) {
        const expected = reference.test(uri);
        if (matcher.test(uri) !== expected) disagreements.push(`${template} ${uri}: ${expected}`);
        if (expected) matched++;
      }
    }
    expect(disagreements.slice(0, 10)).toEqual([]);
    expect(matched).toBeGreaterThan(1000);
  });

  it('adjacent simple expressions: a URI that almost matches is refused without backtracking over its splits', () => {
    // twenty adjacent [^/]+ over 400 characters: a backtracking RegExp tries every split
    // (seconds with ten expressions and 40 characters; this one would not end)
    const template = `x://${Array.from({ length: 20 }, (_, i) => `{v${i}}`).join('')}/end`;
    const matcher = templateMatcher(template);
    expect(matcher.test(`x://${'a'.repeat(400)}/b/end`)).toBe(false);
    expect(matcher.test(`x://${'a'.repeat(400)}/end`)).toBe(true);
    expect(matcher.test(`x://${'a'.repeat(19)}/end`)).toBe(false);
    expect(uriTemplateTest(template)(`x://${'a'.repeat(400)}/b/end`)).toBe(false);
  });

  it('the same for adjacent operator expressions and literals between them', () => {
    const template = `p://${Array.from({ length: 12 }, (_, i) => `{v${i}}-{.w${i}}`).join('')}{?q}`;
    const matcher = templateMatcher(template);
    expect(matcher.test(`p://${'-'.repeat(300)}/`)).toBe(false);
    expect(matcher.test(`p://${'a-.b'.repeat(12)}?q=1`)).toBe(true);
  });

  it("a template of 200,000 '{' without a '}' is literal text, read once", () => {
    const template = `t://{a}{b}${'{'.repeat(200_000)}`;
    const matcher = templateMatcher(template);
    expect(matcher.test(`t://ab${'{'.repeat(200_000)}`)).toBe(true);
    expect(matcher.test(`t://ab${'{'.repeat(199_999)}`)).toBe(false);
    expect(literalEnds(template)).toEqual({ prefix: 't://', suffix: '{'.repeat(200_000) });
  });

  it('{/x,y,…} with more than 1000 variables matches up to 1000 segments (RE2 counts up to 1000)', () => {
    const vars = Array.from({ length: 1500 }, (_, i) => `v${i}`).join(',');
    const template = `s://r{/${vars}}`;
    const matcher = templateMatcher(template);
    const test = uriTemplateTest(template);
    for (const n of [0, 1, 1000, 1001]) {
      const uri = `s://r${'/x'.repeat(n)}`;
      expect([n, matcher.test(uri), test(uri)]).toEqual([n, n <= 1000, n <= 1000]);
    }
  });
});

describe('TemplateIndex: the first template in source order that matches, found by literal prefix and suffix', () => {
  it('agrees with a scan of every template in order, for any bound, on nested prefixes and shared suffixes', () => {
    const next = random(11);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
    const piece = (n: number): string => Array.from({ length: n }, () => pick(PIECES)).join('');
    const templates: string[] = [];
    for (let i = 0; i < 300; i++)
      templates.push(
        next() < 0.1 && templates.length > 0
          ? pick(templates) // an identical template again
          : `${piece(Math.floor(next() * 4))}${pick(EXPRESSIONS)}${piece(Math.floor(next() * 2))}`,
      );
    const index = new TemplateIndex(templates.map((uriTemplate, i) => ({ uriTemplate, value: i })));
    const patterns = templates.map(templateMatcher);
    const disagreements: string[] = [];
    let matched = 0;
    for (let u = 0; u < 3000; u++) {
      const uri = piece(Math.floor(next() * 8));
      const end = Math.floor(next() * (templates.length + 1));
      const expected = linearFirst(patterns, uri, end);
      if (index.firstMatch(uri, end) !== expected) disagreements.push(`${uri} before ${end}`);
      if (index.firstMatch(uri) !== linearFirst(patterns, uri)) disagreements.push(uri);
      if (expected !== undefined) matched++;
    }
    expect(disagreements).toEqual([]);
    expect(matched).toBeGreaterThan(100);
  });

  it('the earliest of several matching templates wins, whatever their literal prefixes', () => {
    const templates = ['p://r/{x}/z', 'p://{+rest}', 'p://r/{x}', 'p://r/k{?q}'];
    const index = new TemplateIndex(templates.map((uriTemplate, i) => ({ uriTemplate, value: i })));
    expect(index.firstMatch('p://r/k')).toBe(1);
    expect(index.firstMatch('p://r/k/z')).toBe(0);
    expect(index.firstMatch('p://r/k', 1)).toBeUndefined();
    expect(index.firstMatch('p://r/k/z', 1)).toBe(0);
    const reordered = ['p://r/k{?q}', 'p://r/{x}', 'p://{+rest}'];
    const index2 = new TemplateIndex(
      reordered.map((uriTemplate, i) => ({ uriTemplate, value: i })),
    );
    expect(index2.firstMatch('p://r/k')).toBe(0);
    expect(index2.firstMatch('p://r/other')).toBe(1);
    expect(index2.firstMatch('p://r/a/b')).toBe(2);
  });

  it('an identical template is tested once, under its first occurrence', () => {
    const index = new TemplateIndex(
      ['dup://{x}', 'dup://{x}', 'dup://{x}'].map((uriTemplate, i) => ({ uriTemplate, value: i })),
    );
    expect(index.firstMatch('dup://k')).toBe(0);
    expect(index.firstMatch('dup://a/b')).toBeUndefined();
    expect(index.tests).toBe(2);
  });

  it('a URI meets only the templates whose literal prefix and suffix it has: 10,000 templates, one shared prefix, 10,000 URIs', () => {
    const n = 10_000;
    const index = new TemplateIndex(
      Array.from({ length: n }, (_, i) => ({ uriTemplate: `u://host/{x}/t${i}`, value: i })),
    );
    const wrong: number[] = [];
    for (let i = 0; i < n; i++) if (index.firstMatch(`u://host/a/t${i}`) !== i) wrong.push(i);
    for (let i = 0; i < n; i++)
      if (index.firstMatch(`u://host/a/r${i}`) !== undefined) wrong.push(i);
    expect(wrong).toEqual([]);
    // each matching URI meets its own template and those ending in a suffix of it (t1 for t11…)
    expect(index.tests).toBeLessThanOrEqual(5 * n);
  });
});

describe('templatesBeyondReach: no URI meets more than MAX_TEMPLATES_ONE_URI_MEETS templates of one source', () => {
  const cap = MAX_TEMPLATES_ONE_URI_MEETS;

  /** The index of the kept templates, in the source's order (values: their place in it). */
  function keptIndex(uriTemplates: readonly string[]) {
    const beyond = templatesBeyondReach(uriTemplates);
    const kept = uriTemplates
      .map((uriTemplate, value) => ({ uriTemplate, value }))
      .filter((_, i) => beyond[i] === undefined);
    return { beyond, kept, index: new TemplateIndex(kept) };
  }

  it('10,000 templates sharing prefix and suffix "" with distinct middles, 10,000 URIs: the first 256 kept, tests at most 256 a URI', () => {
    const n = 10_000;
    const uriTemplates = Array.from({ length: n }, (_, i) => `{a}-${i}-{b}`);
    const { beyond, kept, index } = keptIndex(uriTemplates);
    expect(kept.map((k) => k.value)).toEqual(Array.from({ length: cap }, (_, i) => i));
    expect(beyond[cap]).toEqual({ prefix: '', suffix: '' });
    // URIs that meet every kept template and match none: the worst case for the index
    for (let i = 0; i < n; i++) expect(index.firstMatch(`res:${i}`)).toBeUndefined();
    expect(index.tests).toBe(n * cap);
    // the earliest kept template still wins, exactly as a scan of the kept ones in order
    const patterns = kept.map((k) => templateMatcher(k.uriTemplate));
    for (const uri of ['x-5-y', 'x-255-y', 'x-256-y', 'a-12-b-3-c', 'x-9999-y'])
      expect(index.firstMatch(uri)).toBe(linearFirst(patterns, uri));
    expect(index.firstMatch('x-5-y')).toBe(5);
    expect(index.firstMatch('x-256-y')).toBeUndefined();
  });

  it('nested prefixes and suffixes (x{a}, xx{a}, …; {a}y, {a}yy, …) are bounded the same way', () => {
    const n = 2000;
    const uriTemplates = Array.from({ length: n }, (_, i) =>
      i % 2 === 0 ? `${'x'.repeat(i / 2 + 1)}{a}` : `{a}${'y'.repeat((i + 1) / 2)}`,
    );
    const { index } = keptIndex(uriTemplates);
    const uri = `${'x'.repeat(n)}-${'y'.repeat(n)}`;
    for (let i = 0; i < 100; i++) index.firstMatch(`${uri}/${i}`);
    for (let i = 0; i < 100; i++) index.firstMatch(uri);
    expect(index.tests).toBeLessThanOrEqual(200 * cap);
    expect(index.firstMatch(uri)).toBe(0);
  });

  it('templates whose ends do not nest are all kept, however many', () => {
    const n = 10_000;
    const distinctStarts = Array.from({ length: n }, (_, i) => `t${i}://r/{x}`);
    expect(templatesBeyondReach(distinctStarts).every((b) => b === undefined)).toBe(true);
    // one shared start, distinct ends: a URI ends with one of them at most
    const distinctEnds = Array.from({ length: n }, (_, i) => `u://host/{x}/t${i}.json`);
    expect(templatesBeyondReach(distinctEnds).every((b) => b === undefined)).toBe(true);
  });

  it('random templates: every URI meets at most the cap of the kept ones, and the first kept match wins', () => {
    const next = random(7);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
    const literals = ['', 'a', 'ab', 'a/', 'p://', 'p://a', '-', 'b'];
    const uriTemplates = [
      ...new Set(
        Array.from(
          { length: 3000 },
          () => `${pick(literals)}{x}${pick(literals)}{y}${pick(literals)}`,
        ),
      ),
    ];
    const small = 8;
    const beyond = templatesBeyondReach(uriTemplates, small);
    const kept = uriTemplates
      .map((uriTemplate, value) => ({ uriTemplate, value }))
      .filter((_, i) => beyond[i] === undefined);
    const patterns = kept.map((k) => templateMatcher(k.uriTemplate));
    for (let u = 0; u < 500; u++) {
      const uri = `${pick(literals)}${pick(['k', 'k/k', 'ab'])}${pick(literals)}${pick(['z', ''])}${pick(literals)}`;
      const index = new TemplateIndex(kept);
      const first = index.firstMatch(uri);
      expect(index.tests).toBeLessThanOrEqual(small);
      const at = linearFirst(patterns, uri);
      expect(first).toBe(at === undefined ? undefined : kept[at]?.value);
    }
  });
});
