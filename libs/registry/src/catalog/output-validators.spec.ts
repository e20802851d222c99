import { RE2JS } from 're2js';
import { SchemaChecker } from '../manifest/schema-checker';
import type { SchemaDialects } from '../manifest/schema-dialects';
import { validateManifest } from '../manifest/validate-manifest';
import type { ManifestTool } from '../manifest/manifest.types';
import { OutputValidators } from './output-validators';

/**
 * The example of docs/operations.md §6 "Structured output": a tool whose answer must be an object
 * with a numeric total.
 */
const TOTAL = {
  type: 'object',
  properties: { total: { type: 'number' } },
  required: ['total'],
};

/** A manifest tool as validateManifest accepts it (publishedJson, fingerprint). */
async function accepted(raw: Record<string, unknown>): Promise<ManifestTool> {
  const result = await validateManifest(
    {
      bundleId: 'b',
      tools: [
        {
          name: 'b.t',
          description: 'A tool.',
          inputSchema: { type: 'object' },
          ...raw,
          _meta: { version: '1' },
        },
      ],
    },
    { bundleId: 'b', namePrefix: 'b.', maxToolsPerBundle: 10 },
    new SchemaChecker(),
  );
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.manifest.tools[0] as ManifestTool;
}

function compileSpies(validators: OutputValidators): jest.SpyInstance[] {
  const dialects = (validators as unknown as { dialects: SchemaDialects }).dialects;
  return (['draft-07', '2019-09', '2020-12'] as const).map((d) =>
    jest.spyOn(dialects.instanceFor(d), 'compile'),
  );
}

const calls = (spies: jest.SpyInstance[]): number =>
  spies.reduce((n, s) => n + s.mock.calls.length, 0);

describe('OutputValidators: outputSchemas compiled once per catalog (docs/operations.md §6 "Structured output")', () => {
  it('gives the example tool a validator: {total:42.5} conforms, {total:"x"} names the path and rule', async () => {
    const validate = new OutputValidators().validatorFor(await accepted({ outputSchema: TOTAL }));
    expect(validate?.({ total: 42.5 })).toBeUndefined();
    expect(validate?.({ total: 'x' })).toBe('structuredContent/total must be number');
    expect(validate?.({})).toBe("structuredContent must have required property 'total'");
  });

  it('gives no validator to a tool without an outputSchema, even when a property is named outputSchema', async () => {
    const validators = new OutputValidators();
    expect(validators.validatorFor(await accepted({}))).toBeUndefined();
    const mention = await accepted({
      inputSchema: { type: 'object', properties: { outputSchema: { type: 'string' } } },
    });
    expect(validators.validatorFor(mention)).toBeUndefined();
  });

  it('compiles an unchanged tool once across catalogs, and again after it left a catalog', async () => {
    const validators = new OutputValidators();
    const spies = compileSpies(validators);
    const tool = await accepted({ outputSchema: TOTAL });
    validators.validatorFor(tool);
    validators.retainUsed();
    validators.validatorFor(tool);
    validators.retainUsed();
    expect(calls(spies)).toBe(1);
    validators.retainUsed(); // a catalog without the tool
    expect(validators.size).toBe(0);
    validators.validatorFor(tool);
    expect(calls(spies)).toBe(2);
  });

  it('compiles a changed outputSchema anew (the fingerprint covers the published entry)', async () => {
    const validators = new OutputValidators();
    const before = validators.validatorFor(await accepted({ outputSchema: TOTAL }));
    const after = validators.validatorFor(
      await accepted({ outputSchema: { ...TOTAL, properties: { total: { type: 'string' } } } }),
    );
    expect(before?.({ total: 'x' })).toBeDefined();
    expect(after?.({ total: 'x' })).toBeUndefined();
  });

  it.each([
    ['draft-07', 'http://json-schema.org/draft-07/schema#', 0],
    ['2019-09', 'https://json-schema.org/draft/2019-09/schema', 1],
    ['2020-12', 'https://json-schema.org/draft/2020-12/schema', 2],
  ])('compiles a %s outputSchema with that dialect', async (_label, uri, index) => {
    const validators = new OutputValidators();
    const spies = compileSpies(validators);
    const validate = validators.validatorFor(
      await accepted({ outputSchema: { $schema: uri, ...TOTAL } }),
    );
    expect(spies.map((s) => s.mock.calls.length)).toEqual(
      [0, 1, 2].map((i) => (i === index ? 1 : 0)),
    );
    expect(validate?.({ total: 1 })).toBeUndefined();
    expect(validate?.({ total: true })).toBe('structuredContent/total must be number');
  });

  it('keeps working after ajv forgot the schema: $ref, recursion and $id still resolve', async () => {
    const validators = new OutputValidators();
    const validate = validators.validatorFor(
      await accepted({
        outputSchema: {
          $id: 'urn:example:tree',
          type: 'object',
          properties: {
            children: { type: 'array', items: { $ref: 'urn:example:tree' } },
            n: { $ref: '#/$defs/n' },
          },
          $defs: { n: { type: 'integer' } },
        },
      }),
    );
    // a second schema with the same $id compiles too: nothing stayed in ajv
    const other = validators.validatorFor(
      await accepted({
        outputSchema: { $id: 'urn:example:tree', type: 'object', required: ['x'] },
      }),
    );
    expect(validate?.({ n: 1, children: [{ n: 2, children: [] }] })).toBeUndefined();
    expect(validate?.({ children: [{ n: 1.5 }] })).toBe(
      'structuredContent/children/0/n must be integer',
    );
    expect(other?.({})).toBe("structuredContent must have required property 'x'");
  });

  it('matches patterns with RE2, in linear time: ^(a|a)*$ backtracks exponentially in RegExp and passes the nesting check', async () => {
    const re2 = jest.spyOn(RE2JS, 'compile');
    const validate = new OutputValidators().validatorFor(
      await accepted({
        outputSchema: {
          type: 'object',
          properties: { x: { type: 'string', pattern: '^(a|a)*$' } },
        },
      }),
    );
    expect(re2).toHaveBeenCalledWith('^(a|a)*$');
    re2.mockRestore();
    expect(validate?.({ x: `${'a'.repeat(24)}!` })).toMatch(
      /^structuredContent\/x must match pattern/,
    );
    expect(validate?.({ x: 'aaaa' })).toBeUndefined();
  });

  it('refuses, with the reason, every answer to a schema that refers to itself without end', async () => {
    const validate = new OutputValidators().validatorFor(
      await accepted({ outputSchema: { $ref: '#', type: 'object' } }),
    );
    expect(validate?.({ a: 1 })).toBe(
      "the tool's outputSchema refers to itself without end, so no answer can be checked against it",
    );
  });

  it('refuses an answer whose array is too long to check against uniqueItems, before comparing its items pairwise', async () => {
    const validate = new OutputValidators().validatorFor(
      await accepted({
        outputSchema: {
          type: 'object',
          properties: { a: { type: 'array', uniqueItems: true } },
        },
      }),
    );
    const items = (n: number): { i: number }[] => Array.from({ length: n }, (_, i) => ({ i }));
    expect(validate?.({ a: items(1000) })).toBeUndefined();
    expect(validate?.({ a: [{ i: 1 }, { i: 1 }] })).toBe(
      'structuredContent/a must NOT have duplicate items (items ## 0 and 1 are identical)',
    );
    expect(validate?.({ a: items(20_000) })).toBe(
      'structuredContent/a: has more than 1000 items, too many to check against an outputSchema with uniqueItems',
    );
  });

  describe('a schema too large to compile on the event loop (more than 300 members)', () => {
    /** A tool entry as the validation worker hands it over: the schema is not compiled here. */
    const large = (outputSchema: Record<string, unknown>): ManifestTool =>
      ({
        name: 'b.wide',
        publishedJson: JSON.stringify({ name: 'b.wide', outputSchema }),
        fingerprint: JSON.stringify(outputSchema).length.toString(36),
      }) as unknown as ManifestTool;
    const wide = (extra: Record<string, unknown> = {}) => ({
      type: 'object',
      properties: {
        ...Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`p${i}`, { type: 'string' }])),
        total: { type: 'number' },
      },
      required: ['total'],
      ...extra,
    });

    it('is checked without any ajv compile, by the same rules, its reasons naming the path', () => {
      const validators = new OutputValidators();
      const spies = compileSpies(validators);
      const validate = validators.validatorFor(large(wide()));
      expect(validate?.({ total: 1, p7: 'x' })).toBeUndefined();
      expect(validate?.({ total: 'x' })).toMatch(/^structuredContent\/total: .*number/);
      expect(validate?.({ total: 1, p399: 3 })).toMatch(/^structuredContent\/p399: .*string/);
      expect(validate?.({})).toMatch(/^structuredContent: .*"total"/);
      expect(calls(spies)).toBe(0);
    });

    it('reads the dialect its $schema declares (draft-07 and 2019-09 keywords)', () => {
      const validators = new OutputValidators();
      const draft07 = validators.validatorFor(
        large(
          wide({
            $schema: 'http://json-schema.org/draft-07/schema#',
            dependencies: { p1: ['p2'] },
          }),
        ),
      );
      expect(draft07?.({ total: 1, p1: 'a', p2: 'b' })).toBeUndefined();
      expect(draft07?.({ total: 1, p1: 'a' })).toMatch(/^structuredContent: .*p2/);
      const v2019 = validators.validatorFor(
        large(
          wide({
            $schema: 'https://json-schema.org/draft/2019-09/schema',
            dependentRequired: { p3: ['p4'] },
          }),
        ),
      );
      expect(v2019?.({ total: 1, p3: 'a' })).toMatch(/^structuredContent: .*p4/);
    });

    it('holding a pattern, is compiled after all (RE2: the interpreter would backtrack)', () => {
      const validators = new OutputValidators();
      const spies = compileSpies(validators);
      const validate = validators.validatorFor(
        large({
          ...wide(),
          properties: { ...wide().properties, x: { type: 'string', pattern: '^(a|a)*$' } },
        }),
      );
      expect(calls(spies)).toBe(1);
      expect(validate?.({ total: 1, x: `${'a'.repeat(24)}!` })).toMatch(/must match pattern/);
    });

    it('refuses, never throws, when the interpreter cannot follow a reference', () => {
      const validate = new OutputValidators().validatorFor(
        large({
          ...wide(),
          properties: { ...wide().properties, ref: { $ref: 'urn:nowhere#/x' } },
        }),
      );
      expect(() => validate?.({ total: 1, ref: 1 })).not.toThrow();
      expect(validate?.({ total: 1, ref: 1 })).toMatch(/could not (check|compile)/);
    });

    it('works for an anyOf of 2,000 branches, which ajv cannot even compile on the main thread (its stack)', () => {
      const validate = new OutputValidators().validatorFor(
        large({
          type: 'object',
          anyOf: Array.from({ length: 2_000 }, (_, i) => ({
            type: 'object',
            properties: { [`k${i}`]: { type: 'string', minLength: 1 } },
            required: [`k${i}`],
          })),
        }),
      );
      expect(validate?.({ k1999: 'a' })).toBeUndefined();
      expect(validate?.({ k1999: '' })).toMatch(/^structuredContent/);
    });
  });
});
