import type { BundleDefinition, UpstreamDefinition } from '@app/config';
import {
  ArgumentValidators,
  duplicateMember,
  LIST_ALL_VIOLATIONS_UP_TO,
  MAX_UNIQUE_CHECKED_ITEMS,
  validatesArguments,
} from './argument-validators';
import type { CatalogTool } from './catalog-tool';

/** The bench's generated tools' shape: a required free-text filter and a bounded limit. */
const LOOKUP = {
  type: 'object',
  properties: {
    query: { type: 'string', maxLength: 20 },
    limit: { type: 'integer', minimum: 1, maximum: 100 },
    filter: {
      type: 'object',
      properties: { 'a/b': { type: 'boolean' } },
      additionalProperties: false,
    },
  },
  required: ['query'],
};

let fingerprints = 0;

/** Arguments text of this length (what check reads of the text: its size, and no member twice). */
const text = (length: number): string => ' '.repeat(length);

function bundleTool(
  inputSchema: unknown,
  bundle: Partial<BundleDefinition> = {},
  fingerprint = `f${++fingerprints}`,
): CatalogTool {
  return {
    name: 'b.lookup',
    sourceId: 'b',
    route: { kind: 'bundle', bundle: { id: 'b', ...bundle } as BundleDefinition },
    timeoutMillis: 1000,
    version: '1',
    publishedJson: JSON.stringify({ name: 'b.lookup', inputSchema }),
    fingerprint,
  };
}

function upstreamTool(inputSchema: unknown, validateArguments?: boolean): CatalogTool {
  return {
    name: 'up__lookup',
    sourceId: 'up',
    route: {
      kind: 'upstream',
      upstream: { id: 'up', validateArguments } as UpstreamDefinition,
      originalName: 'lookup',
    },
    timeoutMillis: 1000,
    version: '',
    publishedJson: JSON.stringify({ name: 'up__lookup', inputSchema }),
    fingerprint: `u${++fingerprints}`,
  };
}

describe('ArgumentValidators: arguments checked against inputSchema (docs/operations.md §6 "Argument validation")', () => {
  it('passes conforming arguments and names every violated path, one line each', () => {
    const checks = new ArgumentValidators();
    const tool = bundleTool(LOOKUP);
    expect(checks.check(tool, { query: 'x', limit: 5 }, text(30))).toBeUndefined();
    expect(
      checks.check(tool, { limit: 500, filter: { 'a/b': 'yes', extra: 1 } }, text(60)),
    ).toEqual([
      '/query: is required',
      '/limit: must be <= 100',
      '/filter/extra: is not allowed',
      '/filter/a~1b: must be boolean',
    ]);
    expect(checks.check(tool, 'text', text(6))).toEqual(['/: must be object']);
  });

  it('checks nothing with a schema that refers to itself without end ({"$ref": "#"}, a $defs loop): the source judges the arguments', () => {
    const checks = new ArgumentValidators();
    for (const schema of [
      { $ref: '#', type: 'object' },
      { type: 'object', allOf: [{ $ref: '#/$defs/a' }], $defs: { a: { anyOf: [{ $ref: '#' }] } } },
    ]) {
      const tool = bundleTool(schema);
      expect(checks.check(tool, { query: 'x' }, text(20))).toBeUndefined();
      // remembered: not recursed again
      expect(checks.check(tool, { query: 'y' }, text(20))).toBeUndefined();
    }
  });

  it('names the values an enum allows, for a model to pick one', () => {
    const checks = new ArgumentValidators();
    const tool = bundleTool({
      type: 'object',
      properties: { tier: { enum: ['basic', 'gold', 3] } },
    });
    expect(checks.check(tool, { tier: 'silver' }, text(20))).toEqual([
      '/tier: must be one of "basic", "gold", 3',
    ]);
  });

  it('checks by source: bundles by default and unless turned off, upstreams only when turned on', () => {
    expect(validatesArguments(bundleTool(LOOKUP))).toBe(true);
    expect(validatesArguments(bundleTool(LOOKUP, { validateArguments: true }))).toBe(true);
    expect(validatesArguments(bundleTool(LOOKUP, { validateArguments: false }))).toBe(false);
    expect(validatesArguments(upstreamTool(LOOKUP))).toBe(false);
    expect(validatesArguments(upstreamTool(LOOKUP, false))).toBe(false);
    expect(validatesArguments(upstreamTool(LOOKUP, true))).toBe(true);
    const checks = new ArgumentValidators();
    expect(
      checks.check(bundleTool(LOOKUP, { validateArguments: false }), {}, text(2)),
    ).toBeUndefined();
    expect(checks.check(upstreamTool(LOOKUP), {}, text(2))).toBeUndefined();
    expect(checks.check(upstreamTool(LOOKUP, true), {}, text(2))).toEqual(['/query: is required']);
    expect(checks.size).toBe(1);
  });

  it("compiles in the dialect the schema's $schema declares", () => {
    const checks = new ArgumentValidators();
    // draft-07: items as a list is a tuple; 2020-12 has prefixItems for that and ignores it
    const tuple = { type: 'array', items: [{ type: 'string' }] };
    const draft07 = bundleTool({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { pair: tuple },
    });
    expect(checks.check(draft07, { pair: [1] }, text(10))).toEqual(['/pair/0: must be string']);
  });

  it('checks nothing for a schema it cannot compile or of an unknown dialect (the source judges)', () => {
    const checks = new ArgumentValidators();
    const draft04 = upstreamTool(
      { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object', required: ['q'] },
      true,
    );
    expect(checks.check(draft04, {}, text(2))).toBeUndefined();
    const broken = upstreamTool({ type: 'object', properties: { q: { type: 'nope' } } }, true);
    expect(checks.check(broken, { q: 1 }, text(8))).toBeUndefined();
    const none = upstreamTool(undefined, true);
    expect(checks.check(none, { q: 1 }, text(8))).toBeUndefined();
    const unknownLive = { ...upstreamTool(LOOKUP, true), publishedJson: '', fingerprint: '' };
    expect(checks.check(unknownLive, {}, text(2))).toBeUndefined();
  });

  it('names at most 20 violations and counts the rest', () => {
    const checks = new ArgumentValidators();
    const tool = bundleTool({ type: 'array', items: { type: 'string' } });
    const lines = checks.check(
      tool,
      Array.from({ length: 25 }, (_, i) => i),
      text(100),
    );
    expect(lines).toHaveLength(21);
    expect(lines?.[0]).toBe('/0: must be string');
    expect(lines?.[20]).toBe('… and 5 more violation(s)');
  });

  it('names only the first violation of arguments over the listing limit', () => {
    const checks = new ArgumentValidators();
    const tool = bundleTool({ type: 'array', items: { type: 'string' } });
    const many = Array.from({ length: 100_000 }, () => 1);
    expect(checks.check(tool, many, text(LIST_ALL_VIOLATIONS_UP_TO + 1))).toEqual([
      '/0: must be string',
      '(arguments over 64 KiB: only the first violation is named)',
    ]);
    expect(checks.check(tool, ['a'], text(LIST_ALL_VIOLATIONS_UP_TO + 1))).toBeUndefined();
  });

  it('keeps the validators used last, at most its capacity, compiling each tool once while kept', () => {
    const checks = new ArgumentValidators(2);
    const a = bundleTool(LOOKUP, {}, 'a');
    const b = bundleTool(LOOKUP, {}, 'b');
    const c = bundleTool(LOOKUP, {}, 'c');
    checks.check(a, { query: 'x' }, text(10));
    checks.check(b, { query: 'x' }, text(10));
    checks.check(a, { query: 'x' }, text(10)); // a is now the most recent
    checks.check(c, { query: 'x' }, text(10)); // b, the least recent, leaves
    expect(checks.size).toBe(2);
    const kept = (checks as unknown as { kept: Map<string, unknown> }).kept;
    expect([...kept.keys()]).toEqual(['a', 'c']);
    const compiledA = kept.get('a');
    checks.check(a, { query: 'y' }, text(10));
    expect(kept.get('a')).toBe(compiledA);
  });
});

describe('ArgumentValidators against a hostile pattern', () => {
  it('matches patterns in linear time: a backtracking pattern cannot stall the check', () => {
    const checks = new ArgumentValidators();
    const tool = bundleTool({
      type: 'object',
      properties: {
        h: { type: 'string', pattern: '^([a-z0-9]+[.-]?)*[a-z0-9]$' },
        g: { type: 'string', pattern: '^(a|aa)+$' },
      },
    });
    const started = performance.now();
    expect(
      checks.check(tool, { h: `${'a'.repeat(5000)}!`, g: `${'a'.repeat(5000)}!` }, text(10_100)),
    ).toEqual([
      '/h: must match pattern "^([a-z0-9]+[.-]?)*[a-z0-9]$"',
      '/g: must match pattern "^(a|aa)+$"',
    ]);
    expect(checks.check(tool, { h: 'host.example', g: 'aaa' }, text(40))).toBeUndefined();
    // a backtracking engine takes minutes on these inputs; RE2 well under a second even on a
    // loaded machine (a bound that cannot be missed by a correct engine, nor met by a wrong one)
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('checks nothing for a pattern RE2 cannot take (the source judges), as for a schema that does not compile', () => {
    const checks = new ArgumentValidators();
    const tool = bundleTool({
      type: 'object',
      properties: { w: { type: 'string', pattern: '^(a)\\1$' } },
      required: ['w'],
    });
    expect(checks.check(tool, {}, text(2))).toBeUndefined();
  });
});

describe('numbers with more digits than a double holds (the source gets the text, the check the double)', () => {
  const bounded = {
    type: 'object',
    properties: {
      n: { type: 'integer', maximum: 1 },
      ratio: { type: 'number', minimum: 0, maximum: 1 },
      id: { type: 'integer' },
      tag: {},
      level: { enum: [1, 2] },
    },
  };
  const check = (json: string): readonly string[] | undefined =>
    new ArgumentValidators().check(bundleTool(bounded), JSON.parse(json), json);

  it('refuses one whose check depends on the digits dropped, naming it', () => {
    for (const [json, where] of [
      ['{"n":1.00000000000000000001}', '/n'], // not an integer, and over the maximum
      ['{"n":0.99999999999999999999}', '/n'], // not an integer (JSON.parse: 1)
      ['{"ratio":1.00000000000000000001}', '/ratio'], // over the maximum (JSON.parse: 1)
      ['{"ratio":-1e-400}', '/ratio'], // under the minimum (JSON.parse: -0)
      ['{"level":1.00000000000000000001}', '/level'], // not in the enum
      ['{"id":9007199254740993.5}', '/id'], // a fraction no double there holds
    ] as const) {
      const refused = check(json);
      expect(refused).toHaveLength(1);
      expect(refused?.[0]).toMatch(
        new RegExp(
          `^${where}: .* has more digits than a double holds and the schema's check depends on them`,
        ),
      );
    }
  });

  it('passes one the schema does not constrain, as written (a 19-digit id, a free value)', () => {
    expect(check('{"id":12345678901234567890}')).toBeUndefined();
    expect(check('{"tag":1.00000000000000000001,"ratio":0.5}')).toBeUndefined();
    expect(check('{"ratio":0.50000000000000000001}')).toBeUndefined();
  });

  it('refuses a number beyond the range of a double, and too many imprecise numbers to probe', () => {
    expect(check('{"tag":1e400}')?.[0]).toBe(
      '/tag: 1e400 is beyond the range of a double, so it cannot be checked; send a smaller number',
    );
    const many = `{"tag":[${Array.from({ length: 17 }, () => '0.12345678901234567891').join(',')}]}`;
    expect(check(many)?.[0]).toMatch(/^\/: has more than 16 numbers with more digits/);
  });

  it('names every such number when several are probed together, and other violations first', () => {
    expect(
      check('{"id":12345678901234567890,"tag":0.12345678901234567891,"n":0.99999999999999999999}'),
    ).toEqual([
      "/id, /tag, /n: have more digits than a double holds and the schema's check depends on at least one of them; send at most 15 significant digits",
    ]);
    expect(check('{"n":0.99999999999999999999,"ratio":2}')).toEqual(['/ratio: must be <= 1']);
  });

  const refuses = (schema: object, json: string): void => {
    const refused = new ArgumentValidators().check(bundleTool(schema), JSON.parse(json), json);
    expect(refused?.[0]).toMatch(/more digits than a double holds/);
  };
  const passes = (schema: object, json: string): void =>
    expect(
      new ArgumentValidators().check(bundleTool(schema), JSON.parse(json), json),
    ).toBeUndefined();

  it('sees a gap narrower than one double, and a multipleOf past 2^53', () => {
    const hole = {
      properties: {
        n: { type: 'number', not: { exclusiveMinimum: 1, exclusiveMaximum: 1.0000000000000002 } },
      },
    };
    refuses(hole, '{"n":1.00000000000000000001}');
    passes(hole, '{"n":1}');
    refuses({ properties: { n: { multipleOf: 2 } } }, '{"n":9007199254740993}');
  });

  it('probes numbers in every combination: one read low, another high', () => {
    const schema = {
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      if: { properties: { a: { exclusiveMinimum: 1 } }, required: ['a'] },
      then: { properties: { b: { minimum: 5 } } },
    };
    // as written a > 1, so b must be at least 5: it is not
    refuses(schema, '{"a":1.00000000000000000001,"b":4.99999999999999999999}');
    passes(schema, '{"a":1,"b":4.99999999999999999999}');
  });

  it('passes a number written as the exact value of a double', () => {
    passes({ properties: { n: { maximum: 18446744073709551616 } } }, '{"n":18446744073709551616}');
    passes(
      { properties: { n: { maximum: 0.1 } } },
      '{"n":0.1000000000000000055511151231257827021181583404541015625}',
    );
  });

  it('refuses more such numbers than it can probe together where the schema reads values', () => {
    const json = `{"tag":[${Array.from({ length: 5 }, () => '0.12345678901234567891').join(',')}]}`;
    refuses(bounded, json);
    passes({ properties: { tag: {} } }, json);
  });

  it('probes one such number at most where the schema says uniqueItems (each check compares items pairwise)', () => {
    const schema = {
      properties: { rows: { type: 'array', uniqueItems: true }, a: { maximum: 9 }, b: {} },
    };
    passes(schema, '{"rows":[1,2],"a":0.12345678901234567891}');
    refuses(schema, '{"rows":[1,2],"a":0.12345678901234567891,"b":0.12345678901234567891}');
  });

  it('refuses a member named __proto__, which ajv leaves unchecked', () => {
    const schema = { properties: { __proto__: { type: 'number', maximum: 1 } } };
    const json = '{"a":{"\\u005f_proto__":5}}';
    expect(new ArgumentValidators().check(bundleTool(schema), JSON.parse(json), json)).toEqual([
      '/a/__proto__: a member named __proto__ cannot be checked; rename it',
    ]);
  });

  it('refuses in arguments over the listing limit too, with the checks of the arguments bounded to three', () => {
    const json = `{"tag":"${'x'.repeat(LIST_ALL_VIOLATIONS_UP_TO)}","id":12345678901234567890,"n":0.99999999999999999999}`;
    expect(check(json)).toEqual([
      "/id, /n: have more digits than a double holds and the schema's check depends on at least one of them; send at most 15 significant digits",
    ]);
  });

  it('leaves the parsed arguments as they were', () => {
    const json = '{"ratio":0.50000000000000000001,"id":12345678901234567890}';
    const args = JSON.parse(json) as Record<string, unknown>;
    new ArgumentValidators().check(bundleTool(bounded), args, json);
    expect(args).toEqual(JSON.parse(json));
  });
});

describe('duplicateMember: a name given twice is refused, not checked on one value and sent with two', () => {
  it('refuses an array too long to check pairwise under a uniqueItems schema, and checks one within it', () => {
    const v = new ArgumentValidators();
    const tool = bundleTool({
      type: 'object',
      properties: {
        rows: { type: 'array', items: { type: 'object' }, uniqueItems: true },
      },
    });
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ i }));
    expect(v.check(tool, { rows: rows(MAX_UNIQUE_CHECKED_ITEMS) }, text(10))).toBeUndefined();
    expect(v.check(tool, { rows: [{ i: 1 }, { i: 1 }] }, text(10))).toEqual([
      expect.stringMatching(/^\/rows: must NOT have duplicate items/),
    ]);
    expect(v.check(tool, { rows: rows(26_000) }, text(10))).toEqual([
      `/rows: has more than ${MAX_UNIQUE_CHECKED_ITEMS} items, too many to check against a schema with uniqueItems; send fewer`,
    ]);
    // without uniqueItems a long array is checked as any other
    expect(
      v.check(bundleTool({ type: 'object' }), { rows: rows(26_000) }, text(10)),
    ).toBeUndefined();
  });

  it('finds the first repeated name of any object, escapes read, strings and arrays skipped', () => {
    expect(duplicateMember('{"n":99,"n":1}')).toEqual({ path: '/n' });
    expect(duplicateMember('{"n":1,"\\u006e":2}')).toEqual({ path: '/n' });
    expect(duplicateMember('{"a":{"x":1,"y":{"x":2},"x":3}}')).toEqual({ path: '/a/x' });
    expect(duplicateMember('{"a":[{"x":1},{"x":2}],"b":"x,\\"x\\":1"}')).toBeUndefined();
    expect(duplicateMember('{"s":"{\\"k\\":1,\\"k\\":2}"}')).toBeUndefined();
    expect(duplicateMember('[1,2,{"k":1},{"k":1}]')).toBeUndefined();
  });

  it('a checked call with a repeated name is refused naming it', () => {
    const checks = new ArgumentValidators();
    const tool = bundleTool(LOOKUP);
    expect(checks.check(tool, { query: 'x' }, '{"query":"x","query":"y"}')).toEqual([
      '/query: is given more than once; give each member once',
    ]);
    expect(checks.check(tool, { query: 'x' }, '{"query":"x"}')).toBeUndefined();
  });
});
