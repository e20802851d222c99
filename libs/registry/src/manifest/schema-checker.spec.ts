import { SchemaChecker } from './schema-checker';

/** The checker's ajv instance, to count compilations. */
function compileSpy(checker: SchemaChecker): jest.SpyInstance {
  return jest.spyOn(
    (checker as unknown as { ajv: { compile: (s: object) => unknown } }).ajv,
    'compile',
  );
}

const GOOD = { type: 'object', properties: { q: { type: 'string' } } };
const BAD = { type: 'object', properties: { q: { type: 'strin' } } };

describe('SchemaChecker: JSON Schema 2020-12 compile check', () => {
  it('returns undefined for a schema that compiles', () => {
    expect(new SchemaChecker().check(GOOD)).toBeUndefined();
  });

  it("returns ajv's reason for a schema that does not compile", () => {
    const reason = new SchemaChecker().check(BAD);
    expect(reason).toContain('schema is invalid');
    expect(reason).toContain('/properties/q/type');
  });

  it('does not fetch a remote $ref: it fails as unresolved', () => {
    const reason = new SchemaChecker().check({
      type: 'object',
      properties: { a: { $ref: 'https://schemas.example/a.json' } },
    });
    expect(reason).toContain("can't resolve reference https://schemas.example/a.json");
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
