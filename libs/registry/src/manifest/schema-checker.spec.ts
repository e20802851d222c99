import {
  holdsLargeSchema,
  SchemaChecker,
  schemaNodes,
  UPSTREAM_SCHEMA_BOUNDS,
} from './schema-checker';
import type { SchemaDialect, SchemaDialects } from './schema-dialects';

/** The checker's ajv instance of a dialect, to count compilations. */
function compileSpy(checker: SchemaChecker, dialect: SchemaDialect = '2020-12'): jest.SpyInstance {
  const dialects = (checker as unknown as { dialects: SchemaDialects }).dialects;
  return jest.spyOn(dialects.instanceFor(dialect), 'compile');
}

const GOOD = { type: 'object', properties: { q: { type: 'string' } } };
const BAD = { type: 'object', properties: { q: { type: 'strin' } } };

describe('SchemaChecker: JSON Schema 2020-12 compile check', () => {
  it('returns undefined for a schema that compiles', () => {
    expect(new SchemaChecker().check(GOOD)).toBeUndefined();
  });

  it("returns the rule broken, and ajv's reason as the log-only cause, for a schema that does not compile", () => {
    const problem = new SchemaChecker().check(BAD);
    expect(problem?.rule).toBe('does not compile as JSON Schema 2020-12');
    expect(problem?.cause).toContain('schema is invalid');
    expect(problem?.cause).toContain('/properties/q/type');
  });

  it('does not fetch a remote $ref: it fails as unresolved', () => {
    const reason = new SchemaChecker().check({
      type: 'object',
      properties: { a: { $ref: 'https://schemas.example/a.json' } },
    });
    expect(reason?.cause).toContain("can't resolve reference https://schemas.example/a.json");
    expect(reason?.rule).not.toContain('https://');
  });
});

describe('SchemaChecker cache: a refresh revalidates the same schemas every cycle', () => {
  it('compiles the same schema once when it is checked twice', () => {
    const checker = new SchemaChecker();
    const compile = compileSpy(checker);
    expect(checker.check(GOOD)).toBeUndefined();
    expect(checker.check({ ...GOOD })).toBeUndefined();
    expect(compile).toHaveBeenCalledTimes(1);
    expect(checker.size).toBe(1);
  });

  it('caches a failing schema too, with the same reason', () => {
    const checker = new SchemaChecker();
    const compile = compileSpy(checker);
    const first = checker.check(BAD);
    const second = checker.check(JSON.parse(JSON.stringify(BAD)) as Record<string, unknown>);
    expect(first).toBeDefined();
    expect(second).toBe(first);
    expect(compile).toHaveBeenCalledTimes(1);
  });

  it('compiles different schemas separately', () => {
    const checker = new SchemaChecker();
    const compile = compileSpy(checker);
    checker.check(GOOD);
    checker.check(BAD);
    expect(compile).toHaveBeenCalledTimes(2);
    expect(checker.size).toBe(2);
  });

  it('retainOnlySeen drops the entries not checked since the previous call', () => {
    const checker = new SchemaChecker();
    const compile = compileSpy(checker);
    checker.check(GOOD);
    checker.check(BAD);
    checker.retainOnlySeen(); // round 1 saw both
    expect(checker.size).toBe(2);

    checker.check(GOOD);
    checker.retainOnlySeen(); // round 2 saw only GOOD
    expect(checker.size).toBe(1);
    expect(compile).toHaveBeenCalledTimes(2);

    checker.check(GOOD); // still cached
    expect(compile).toHaveBeenCalledTimes(2);
    checker.check(BAD); // dropped, so compiled again
    expect(compile).toHaveBeenCalledTimes(3);
  });

  it('retainOnlySeen with nothing seen empties the cache', () => {
    const checker = new SchemaChecker();
    checker.check(GOOD);
    checker.retainOnlySeen();
    checker.retainOnlySeen();
    expect(checker.size).toBe(0);
  });
});

describe('SchemaChecker and $id: compiled schemas are removed from ajv at once', () => {
  const withId = { $id: 'urn:reports:search', type: 'object', properties: {} };

  it('checks a schema with $id twice (recompiled after the cache dropped it) without "already exists"', () => {
    const checker = new SchemaChecker();
    const compile = compileSpy(checker);
    expect(checker.check(withId)).toBeUndefined();
    checker.retainOnlySeen();
    checker.retainOnlySeen(); // dropped from the cache
    expect(checker.check({ ...withId })).toBeUndefined();
    expect(compile).toHaveBeenCalledTimes(2);
  });

  it('checks two different schemas that share a $id (two tools, or a changed schema)', () => {
    const checker = new SchemaChecker();
    expect(checker.check(withId)).toBeUndefined();
    expect(checker.check({ ...withId, properties: { q: { type: 'string' } } })).toBeUndefined();
  });

  it('checks two different schemas that share a nested $id under $defs', () => {
    const checker = new SchemaChecker();
    const nested = (pattern: string): Record<string, unknown> => ({
      type: 'object',
      $defs: { id: { $id: 'urn:reports:customer', type: 'string', pattern } },
      properties: { c: { $ref: 'urn:reports:customer' } },
    });
    expect(checker.check(nested('^[0-9]+$'))).toBeUndefined();
    expect(checker.check(nested('^[a-z]+$'))).toBeUndefined();
  });
});

describe('SchemaChecker keeps no state between manifests (adversarial findings)', () => {
  it('accepts a schema whose root $id a previous, different schema used for a nested subschema', () => {
    const checker = new SchemaChecker();
    const first = {
      type: 'object',
      properties: { a: { $id: 'http://x.example/nested', type: 'string' } },
    };
    const second = { type: 'object', $id: 'http://x.example/nested' };
    expect(checker.check(first)).toBeUndefined();
    expect(checker.check(second)).toBeUndefined();
  });

  it('falls back to the meta-schema for a schema too wide for the code generator', () => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 3000; i++)
      properties[`p${i}`] = { type: 'string', pattern: '^[a-z]+$', minLength: 1 };
    const checker = new SchemaChecker();
    expect(checker.check({ type: 'object', properties })).toBeUndefined();
    properties.bad = { type: 'strin' };
    expect(checker.check({ type: 'object', properties })).toBeDefined();
  });
});

describe('SchemaChecker dialects (MCP 2025-11-25: no $schema means 2020-12; a declared one is honoured)', () => {
  const DRAFT07 = 'http://json-schema.org/draft-07/schema#';

  it.each([
    ['draft-07 (what the v1 TypeScript SDK emits)', DRAFT07],
    ['draft-07 without the trailing #', 'http://json-schema.org/draft-07/schema'],
    ['draft-06', 'http://json-schema.org/draft-06/schema#'],
    ['draft-06 without the trailing #', 'http://json-schema.org/draft-06/schema'],
    ['2019-09', 'https://json-schema.org/draft/2019-09/schema'],
    ['2019-09 with a trailing #', 'https://json-schema.org/draft/2019-09/schema#'],
    ['2020-12', 'https://json-schema.org/draft/2020-12/schema'],
    ['2020-12 with a trailing #', 'https://json-schema.org/draft/2020-12/schema#'],
  ])('accepts a schema declaring %s', (_label, uri) => {
    expect(new SchemaChecker().check({ $schema: uri, ...GOOD })).toBeUndefined();
  });

  it('compiles a draft-07 schema by draft-07 rules: definitions + $ref, items as an array (tuple)', () => {
    const checker = new SchemaChecker();
    const compile = compileSpy(checker, 'draft-07');
    const schema = {
      $schema: DRAFT07,
      type: 'object',
      definitions: { id: { type: 'string', pattern: '^[0-9]+$' } },
      properties: {
        id: { $ref: '#/definitions/id' },
        pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] },
      },
    };
    expect(checker.check(schema)).toBeUndefined();
    expect(compile).toHaveBeenCalledTimes(1);
  });

  it('compiles a 2019-09 schema with $defs and $recursiveRef', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2019-09/schema',
      $recursiveAnchor: true,
      type: 'object',
      properties: { child: { $recursiveRef: '#' }, n: { $ref: '#/$defs/n' } },
      $defs: { n: { type: 'integer' } },
    };
    expect(new SchemaChecker().check(schema)).toBeUndefined();
  });

  it("still refuses a draft-07 schema that breaks draft-07's own meta-schema", () => {
    const problem = new SchemaChecker().check({ $schema: DRAFT07, ...BAD });
    expect(problem?.rule).toBe('does not compile as JSON Schema draft-07');
  });

  it.each([
    [
      'draft-04 (ajv 8 needs the ajv-draft-04 package, not shipped)',
      'http://json-schema.org/draft-04/schema#',
    ],
    ['a private meta-schema', 'https://schemas.internal.example/meta'],
    ['the unversioned "latest" URI', 'http://json-schema.org/schema#'],
  ])('refuses an unknown dialect, %s, naming the URI in the log-only cause', (_label, uri) => {
    const problem = new SchemaChecker().check({ $schema: uri, ...GOOD });
    expect(problem?.rule).toBe(
      '$schema is not a supported JSON Schema dialect (draft-06, draft-07, 2019-09, 2020-12; none means 2020-12)',
    );
    expect(problem?.cause).toBe(`$schema ${uri}`);
  });

  it('refuses a $schema that is not a string', () => {
    expect(new SchemaChecker().check({ $schema: 7, ...GOOD })?.cause).toBe('$schema 7');
  });

  it('leaves no schema in any dialect instance: the same $id compiles again under another dialect', () => {
    const checker = new SchemaChecker();
    const withId = (uri: string): Record<string, unknown> => ({
      $schema: uri,
      $id: 'https://x.example/s',
      type: 'object',
    });
    expect(checker.check(withId(DRAFT07))).toBeUndefined();
    expect(checker.check(withId('https://json-schema.org/draft/2019-09/schema'))).toBeUndefined();
    expect(checker.check({ ...withId(DRAFT07), required: ['a'] })).toBeUndefined();
  });
});

describe('SchemaChecker mustCompile: an outputSchema must compile for real', () => {
  it('refuses an output schema too wide for the code generator, which an input schema may be', () => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 3000; i++)
      properties[`p${i}`] = { type: 'string', pattern: '^[a-z]+$', minLength: 1 };
    const checker = new SchemaChecker();
    expect(checker.check({ type: 'object', properties })).toBeUndefined();
    expect(checker.check({ type: 'object', properties }, { mustCompile: true })?.rule).toBe(
      'does not compile as JSON Schema 2020-12: it is too large to compile',
    );
  });

  it('refuses an output schema whose pattern RE2 cannot match in linear time (look-around, back-reference); an input schema keeps it', () => {
    const checker = new SchemaChecker();
    for (const pattern of ['^(?=a)b', '(a)\\1']) {
      const schema = { type: 'object', properties: { x: { type: 'string', pattern } } };
      expect(checker.check(schema)).toBeUndefined();
      expect(checker.check(schema, { mustCompile: true })?.rule).toBe(
        'does not compile as JSON Schema 2020-12: a pattern is not one RE2 matches in linear time (no look-around or back-references)',
      );
    }
  });
});

describe('SchemaBounds: a schema of a source that may be hostile holds the event loop for no longer than a small compile', () => {
  const bounds = { compileNodes: 10, maxNodes: 100 };
  /** `n` string properties, and a `$ref` only a compilation resolves (and fails on). */
  const withRef = (n: number): Record<string, unknown> => ({
    type: 'object',
    properties: {
      ...Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: 'string' }])),
      r: { $ref: '#/$defs/nowhere' },
    },
  });

  it('counts every member, booleans and other primitives included, and stops past the limit', () => {
    expect(schemaNodes({ a: [{ b: 1 }, 'x'], c: { d: null } }, 100)).toBe(7);
    // subschemas written as booleans count: ajv compiles each
    expect(schemaNodes({ patternProperties: { '^a$': false, '^b$': true } }, 100)).toBe(4);
    expect(schemaNodes(withRef(1_000), 50)).toBe(51);
    expect(schemaNodes('text', 5)).toBe(1);
    expect(schemaNodes(undefined, 5)).toBe(0);
  });

  it('compiles a schema within compileNodes (its unresolved $ref found), checks a larger one against the meta-schema only', () => {
    const checker = new SchemaChecker();
    expect(checker.check(withRef(2), { bounds })?.rule).toMatch(/^does not compile/);
    expect(checker.check(withRef(30), { bounds })).toBeUndefined();
    // the meta-schema still refuses what is not a schema
    expect(
      checker.check(
        { type: 'object', properties: { ...(withRef(30).properties as object), bad: { type: 7 } } },
        { bounds },
      )?.rule,
    ).toMatch(/^does not compile/);
    // without bounds (a bundle's manifest) the same large schema is compiled
    expect(checker.check(withRef(30))?.rule).toMatch(/^does not compile/);
  });

  it('refuses a schema over maxNodes unread, and does not cache it', () => {
    const checker = new SchemaChecker();
    expect(checker.check(withRef(200), { bounds })).toEqual({
      rule: 'it is too large to check (more than 100 schema members)',
    });
    expect(checker.size).toBe(0);
  });

  it('an output schema (mustCompile) over compileNodes is refused, not left unchecked', () => {
    const checker = new SchemaChecker();
    const large = { type: 'object', properties: withRef(30).properties as object };
    expect(checker.check(large, { bounds, mustCompile: true })?.rule).toMatch(
      /too large to compile$/,
    );
  });

  it("an upstream's schema of 3,000 properties is not compiled, one of 100 is", () => {
    const checker = new SchemaChecker();
    const compile = compileSpy(checker);
    expect(checker.check(withRef(3_000), { bounds: UPSTREAM_SCHEMA_BOUNDS })).toBeUndefined();
    expect(compile).not.toHaveBeenCalled();
    expect(checker.check(withRef(100), { bounds: UPSTREAM_SCHEMA_BOUNDS })?.rule).toMatch(
      /^does not compile/,
    );
    expect(compile).toHaveBeenCalledTimes(1);
  });
});

describe('holdsLargeSchema: which manifests the event loop should not compile', () => {
  const props = (n: number) => ({
    type: 'object',
    properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, {}])),
  });

  it('finds a tool whose input or output schema is over the limit, and nothing in a manifest of small ones', () => {
    expect(holdsLargeSchema({ tools: [{ inputSchema: props(5) }] }, 10)).toBe(false);
    expect(
      holdsLargeSchema({ tools: [{}, { inputSchema: props(5), outputSchema: props(20) }] }, 10),
    ).toBe(true);
    expect(holdsLargeSchema({ tools: [{ inputSchema: props(20) }] }, 10)).toBe(true);
    expect(holdsLargeSchema({ tools: 'none' }, 10)).toBe(false);
    expect(holdsLargeSchema(null, 10)).toBe(false);
  });
});
