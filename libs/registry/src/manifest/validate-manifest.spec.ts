import { SchemaChecker } from './schema-checker';
import {
  MAX_KEPT_REVISION_CHARS,
  validateManifest,
  type ManifestExpectations,
} from './validate-manifest';
import { publishedToolOf, type AcceptedManifest, type ManifestTool } from './manifest.types';
import type { PullErrorType } from './manifest-errors';

const EXPECT: ManifestExpectations = {
  bundleId: 'reports',
  namePrefix: 'r.',
  maxToolsPerBundle: 10,
};

/** A valid manifest tool; `over` replaces fields (undefined removes one). */
function tool(name: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  const base: Record<string, unknown> = {
    name,
    description: `Runs ${name}.`,
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
    _meta: { version: '1' },
  };
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) delete base[key];
    else base[key] = value;
  }
  return base;
}

function manifest(tools: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { bundleId: 'reports', revision: '7', tools, ...extra };
}

async function accept(
  body: unknown,
  expect_: ManifestExpectations = EXPECT,
): Promise<AcceptedManifest> {
  const result = await validateManifest(body, expect_, new SchemaChecker());
  if (!result.ok) {
    throw new Error(`expected the manifest to be accepted, got ${JSON.stringify(result)}`);
  }
  return result.manifest;
}

async function reject(
  body: unknown,
  expect_: ManifestExpectations = EXPECT,
): Promise<{
  errorType: PullErrorType;
  details: string[];
  types: PullErrorType[];
  causes: Array<string | undefined>;
}> {
  const result = await validateManifest(body, expect_, new SchemaChecker());
  if (result.ok) throw new Error('expected the manifest to be rejected');
  return {
    errorType: result.errorType,
    details: result.problems.map((p) => p.detail),
    types: result.problems.map((p) => p.type),
    causes: result.problems.map((p) => p.cause),
  };
}

/** The error type of a manifest holding only this tool. */
async function errorTypeOfTool(raw: unknown): Promise<PullErrorType> {
  return (await reject(manifest([raw]))).errorType;
}

describe('manifest top level (contract §5)', () => {
  it('keeps at most MAX_KEPT_REVISION_CHARS characters of a revision, never half a surrogate pair', async () => {
    const long = 'r'.repeat(100_000);
    expect((await accept(manifest([tool('r.a')], { revision: long }))).revision).toBe(
      long.slice(0, MAX_KEPT_REVISION_CHARS),
    );
    const split = `${'r'.repeat(MAX_KEPT_REVISION_CHARS - 1)}😀tail`;
    expect((await accept(manifest([tool('r.a')], { revision: split }))).revision).toBe(
      'r'.repeat(MAX_KEPT_REVISION_CHARS - 1),
    );
    const exact = 'x'.repeat(MAX_KEPT_REVISION_CHARS);
    expect((await accept(manifest([tool('r.a')], { revision: exact }))).revision).toBe(exact);
    const rejected = await validateManifest(
      { ...manifest([tool('other.a')]), revision: long },
      EXPECT,
      new SchemaChecker(),
    );
    expect(rejected.ok === false && rejected.revision?.length).toBe(MAX_KEPT_REVISION_CHARS);
  });

  it.each([[null], [[]], ['{"bundleId":"reports"}'], [42]])(
    'rejects a manifest that is not a JSON object (%p) with ManifestShapeError',
    async (body) => {
      const { errorType, details } = await reject(body);
      expect(errorType).toBe('ManifestShapeError');
      expect(details).toEqual(['the manifest must be a JSON object']);
    },
  );

  it('rejects a bundleId that differs from the configured id with BundleIdMismatchError', async () => {
    const { errorType, details } = await reject({
      ...manifest([tool('r.a')]),
      bundleId: 'billing',
    });
    expect(errorType).toBe('BundleIdMismatchError');
    // the received value is not quoted: it is a fragment of the answer (contract §9)
    expect(details).toEqual(['bundleId is not the configured id "reports"']);
  });

  it('rejects a missing bundleId with BundleIdMismatchError', async () => {
    const { errorType } = await reject({ tools: [] });
    expect(errorType).toBe('BundleIdMismatchError');
  });

  it.each([[undefined], [{}], ['r.a'], [null]])(
    'rejects tools that is not an array (%p) with ManifestShapeError',
    async (tools) => {
      const { errorType, details } = await reject({ bundleId: 'reports', tools });
      expect(errorType).toBe('ManifestShapeError');
      expect(details).toEqual(['tools must be an array']);
    },
  );

  it('rejects a revision that is neither a string nor a number with ManifestShapeError', async () => {
    const { errorType, details } = await reject(manifest([], { revision: { v: 1 } }));
    expect(errorType).toBe('ManifestShapeError');
    expect(details).toEqual(['revision must be a string when present']);
  });

  it('accepts a numeric revision as its decimal text', async () => {
    expect((await accept(manifest([], { revision: 12 }))).revision).toBe('12');
  });

  it('accepts an empty tools array as "no tool to expose"', async () => {
    const accepted = await accept(manifest([]));
    expect(accepted.bundleId).toBe('reports');
    expect(accepted.revision).toBe('7');
    expect(accepted.tools).toEqual([]);
  });

  it('ignores a baseEndpoint inside the manifest (contract §1: routing comes only from config)', async () => {
    const accepted = await accept(
      manifest([tool('r.a', { baseEndpoint: 'http://evil.example/x' })], {
        baseEndpoint: 'http://evil.example/mcp',
      }),
    );
    expect(accepted.tools.map((t) => t.name)).toEqual(['r.a']);
    expect(JSON.stringify(accepted)).not.toContain('evil.example');
    expect(Object.keys(accepted).sort()).toEqual(['bundleId', 'fingerprint', 'revision', 'tools']);
  });

  it('rejects a tool entry that is not an object with ManifestShapeError naming tools[i]', async () => {
    const { errorType, details } = await reject(manifest([tool('r.a'), 'r.b']));
    expect(errorType).toBe('ManifestShapeError');
    expect(details).toEqual(['tools[1] is not an object']);
  });
});

describe('tool names (contract §5: [A-Za-z0-9_./-]{1,64}, starting with namePrefix)', () => {
  it.each([
    ['a space', 'r.a b'],
    ['a non-ASCII letter', 'r.café'],
    ['a Hangul name', 'r.조회'],
    ['65 characters', `r.${'x'.repeat(63)}`],
    ['the empty string', ''],
    ['a colon', 'r.a:b'],
  ])('rejects a name with %s with ToolNamePatternError', async (_label, name) => {
    const { errorType, details } = await reject(manifest([tool(name)]));
    expect(errorType).toBe('ToolNamePatternError');
    expect(details[0]).toContain('name must match [A-Za-z0-9_./-]{1,64}');
  });

  it('rejects a name that is not a string with ToolNamePatternError', async () => {
    expect(await errorTypeOfTool(tool('x', { name: 42 }))).toBe('ToolNamePatternError');
  });

  it('accepts a name of exactly 64 characters', async () => {
    const name = `r.${'x'.repeat(62)}`;
    expect(name).toHaveLength(64);
    const accepted = await accept(manifest([tool(name)]));
    expect(accepted.tools[0]?.name).toBe(name);
  });

  it('accepts every character of the alphabet: letters, digits, _ . / -', async () => {
    const name = 'r.Az09_.-/x';
    expect((await accept(manifest([tool(name)]))).tools[0]?.name).toBe(name);
  });

  it.each(['r.a//b', 'r./../x', 'r./x/./y', 'r.x/', 'r.a/..'])(
    'rejects %p: an empty, "." or ".." path segment would change the call path below baseEndpoint',
    async (name) => {
      const { errorType, details } = await reject(manifest([tool(name)]));
      expect(errorType).toBe('ToolNamePatternError');
      expect(details).toEqual([
        `tools[0] "${name}": name has an empty, "." or ".." path segment, which would change the call path below baseEndpoint`,
      ]);
    },
  );

  it('quotes a name that breaks the pattern in the log-only cause, never in the detail (contract §9)', async () => {
    const { details, causes } = await reject(manifest([tool('r.données http://x')]));
    expect(details).toEqual(['tools[0]: name must match [A-Za-z0-9_./-]{1,64}']);
    expect(causes).toEqual(['name "r.données http://x"']);
  });

  it('rejects a name that does not start with the namePrefix with ToolNamePrefixError', async () => {
    const { errorType, details, causes } = await reject(manifest([tool('billing.pay')]));
    expect(errorType).toBe('ToolNamePrefixError');
    // the configured prefix goes to the log only (contract §9: status never shows namePrefix)
    expect(details).toEqual([
      `tools[0] "billing.pay": name must start with the bundle's namePrefix`,
    ]);
    expect(causes).toEqual(['namePrefix "r."']);
  });

  it('compares the namePrefix case-sensitively', async () => {
    expect(await errorTypeOfTool(tool('R.a'))).toBe('ToolNamePrefixError');
  });

  it('accepts any valid name when the namePrefix is "" (legacy local fixture)', async () => {
    const accepted = await accept(manifest([tool('anything')]), { ...EXPECT, namePrefix: '' });
    expect(accepted.tools[0]?.name).toBe('anything');
  });

  it('rejects two tools with the same name in one manifest with DuplicateToolNameError', async () => {
    const { errorType, details } = await reject(manifest([tool('r.a'), tool('r.b'), tool('r.a')]));
    expect(errorType).toBe('DuplicateToolNameError');
    expect(details).toEqual(['tools[2] "r.a": the name is already used by tools[0]']);
  });
});

describe('tool description (contract §5: required)', () => {
  it.each([
    ['empty', ''],
    ['whitespace only', ' \n\t '],
    ['missing', undefined],
    ['not a string', 42],
  ])('rejects a %s description with ToolDescriptionError', async (_label, description) => {
    const { errorType, details } = await reject(
      manifest([tool('r.a', { description: description ?? undefined })]),
    );
    expect(errorType).toBe('ToolDescriptionError');
    expect(details).toEqual(['tools[0] "r.a": description must be a non-empty string']);
  });
});

describe('tool schemas (contract §5: inputSchema is JSON Schema 2020-12)', () => {
  it.each([
    ['missing', undefined, 'inputSchema must be a JSON object'],
    ['an array', [{ type: 'object' }], 'inputSchema must be a JSON object'],
    ['a string', '{"type":"object"}', 'inputSchema must be a JSON object'],
    ['of root type "string"', { type: 'string' }, 'inputSchema must have root "type": "object"'],
    ['without a root type', { properties: {} }, 'inputSchema must have root "type": "object"'],
    [
      'with a misspelled type ("strin")',
      { type: 'object', properties: { a: { type: 'strin' } } },
      'inputSchema does not compile as JSON Schema 2020-12',
    ],
    [
      'with an unresolvable $ref',
      { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } },
      'inputSchema does not compile as JSON Schema 2020-12',
    ],
    [
      'with a remote $ref (never fetched)',
      { type: 'object', properties: { a: { $ref: 'https://schemas.example/a.json' } } },
      'inputSchema does not compile as JSON Schema 2020-12',
    ],
    [
      'with a negative minLength',
      { type: 'object', properties: { a: { type: 'string', minLength: -1 } } },
      'inputSchema does not compile as JSON Schema 2020-12',
    ],
  ])('rejects an inputSchema %s with InputSchemaError', async (_label, inputSchema, reason) => {
    const { errorType, details } = await reject(manifest([tool('r.a', { inputSchema })]));
    expect(errorType).toBe('InputSchemaError');
    expect(details).toHaveLength(1);
    expect(details[0]?.startsWith(`tools[0] "r.a": ${reason}`)).toBe(true);
  });

  it.each([
    ['an array', [], 'outputSchema must be a JSON object'],
    ['of root type "array"', { type: 'array' }, 'outputSchema must have root "type": "object"'],
    [
      'with a misspelled type',
      { type: 'object', properties: { rows: { type: 'integr' } } },
      'outputSchema does not compile as JSON Schema 2020-12',
    ],
  ])('rejects an outputSchema %s with OutputSchemaError', async (_label, outputSchema, reason) => {
    const { errorType, details } = await reject(manifest([tool('r.a', { outputSchema })]));
    expect(errorType).toBe('OutputSchemaError');
    expect(details[0]?.startsWith(`tools[0] "r.a": ${reason}`)).toBe(true);
  });

  it.each([
    ['a property pattern', { s: { type: 'string', pattern: '^(a+)+$' } }],
    ['a nested pattern', { o: { type: 'object', properties: { s: { pattern: '(x*)*y' } } } }],
    [
      'a patternProperties key',
      { o: { type: 'object', patternProperties: { '^([a-z]+)*$': {} } } },
    ],
  ])(
    'rejects an outputSchema with %s that may take exponential time (answers are checked on the event loop)',
    async (_label, properties) => {
      const outputSchema = { type: 'object', properties };
      const { errorType, details, causes } = await reject(
        manifest([tool('r.a', { outputSchema })]),
      );
      expect(errorType).toBe('OutputSchemaError');
      expect(details[0]).toBe(
        'tools[0] "r.a": outputSchema has a pattern that may take exponential time to match',
      );
      expect(causes[0]).toMatch(/^pattern "/);
    },
  );

  it('accepts ordinary patterns in an outputSchema, and any pattern in an inputSchema', async () => {
    await accept(
      manifest([
        tool('r.a', {
          inputSchema: { type: 'object', properties: { s: { pattern: '^(a+)+$' } } },
          outputSchema: {
            type: 'object',
            properties: { id: { type: 'string', pattern: '^P-[0-9]{6}$' } },
            patternProperties: { '^x-[a-z]+$': { type: 'string' } },
          },
        }),
      ]),
    );
  });

  it('compiles a 2020-12 schema with $defs/$ref, formats and unknown vendor keywords such as x-mcp-header', async () => {
    const inputSchema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { customer: { type: 'string', pattern: '^[0-9]{8}$', 'x-mcp-header': 'customer-no' } },
      properties: {
        customer: { $ref: '#/$defs/customer' },
        since: { type: 'string', format: 'date' },
        tags: { type: 'array', prefixItems: [{ type: 'string' }], items: false },
      },
      required: ['customer'],
      additionalProperties: false,
      'x-vendor-flag': true,
    };
    const accepted = await accept(manifest([tool('r.a', { inputSchema })]));
    expect((accepted.tools[0] && publishedToolOf(accepted.tools[0]))?.inputSchema).toEqual(
      inputSchema,
    );
  });
});

describe('tool _meta (contract §5: version required, timeoutMillis and enabled optional)', () => {
  it('rejects a tool without _meta with ToolVersionError', async () => {
    const { errorType, details } = await reject(manifest([tool('r.a', { _meta: undefined })]));
    expect(errorType).toBe('ToolVersionError');
    expect(details).toEqual(['tools[0] "r.a": _meta.version is required']);
  });

  it('rejects a missing _meta.version with ToolVersionError: "_meta.version is required"', async () => {
    const { errorType, details } = await reject(manifest([tool('r.a', { _meta: {} })]));
    expect(errorType).toBe('ToolVersionError');
    expect(details).toEqual(['tools[0] "r.a": _meta.version is required']);
  });

  it.each([
    ['empty', { version: '' }],
    ['a number', { version: 1 }],
  ])('rejects a %s _meta.version with ToolVersionError', async (_label, meta) => {
    const { errorType, details } = await reject(manifest([tool('r.a', { _meta: meta })]));
    expect(errorType).toBe('ToolVersionError');
    expect(details).toEqual(['tools[0] "r.a": _meta.version must be a non-empty string']);
  });

  it.each([[-5], [0], [1.5], ['500'], [null]])(
    'rejects _meta.timeoutMillis %p with ToolMetaError (B17 bad_timeout: never run without a timeout)',
    async (timeoutMillis) => {
      const { errorType, details } = await reject(
        manifest([tool('r.bad_timeout', { _meta: { version: '1', timeoutMillis } })]),
      );
      expect(errorType).toBe('ToolMetaError');
      expect(details).toEqual([
        'tools[0] "r.bad_timeout": _meta.timeoutMillis must be a positive integer (ms) when present',
      ]);
    },
  );

  it.each([['false'], [0], [null]])(
    'rejects a non-boolean _meta.enabled (%p) with ToolMetaError',
    async (enabled) => {
      const { errorType, details } = await reject(
        manifest([tool('r.a', { _meta: { version: '1', enabled } })]),
      );
      expect(errorType).toBe('ToolMetaError');
      expect(details).toEqual(['tools[0] "r.a": _meta.enabled must be true or false']);
    },
  );

  it('keeps version, timeoutMillis and enabled out of the published tool but on the accepted tool', async () => {
    const accepted = await accept(
      manifest([
        tool('r.a', { _meta: { version: '2.1', timeoutMillis: 500 } }),
        tool('r.b', { _meta: { version: '1', enabled: false } }),
      ]),
    );
    expect(accepted.tools.map((t) => [t.version, t.timeoutMillis, t.enabled])).toEqual([
      ['2.1', 500, true],
      ['1', undefined, false],
    ]);
  });
});

describe('published tool fields (contract §5: exactly the public fields, never _meta)', () => {
  it('keeps exactly the MCP Tool fields: name, title, description, inputSchema, outputSchema, annotations, icons, execution', async () => {
    const raw = {
      name: 'r.full',
      title: 'Full report',
      description: 'Builds the full report.',
      inputSchema: { type: 'object', properties: {} },
      outputSchema: { type: 'object', properties: { rows: { type: 'integer' } } },
      annotations: { readOnlyHint: true, openWorldHint: false },
      execution: { taskSupport: 'forbidden' },
      icons: [{ src: 'https://cdn.example/icon.png' }],
      baseEndpoint: 'http://evil.example',
      'x-vendor': { internal: true },
      _meta: { version: '3', timeoutMillis: 1000, secret: 'x' },
    };
    const accepted = await accept(manifest([raw]));
    const first = accepted.tools[0];
    const published = first && publishedToolOf(first);
    expect(published).toEqual({
      name: 'r.full',
      title: 'Full report',
      description: 'Builds the full report.',
      inputSchema: { type: 'object', properties: {} },
      outputSchema: { type: 'object', properties: { rows: { type: 'integer' } } },
      annotations: { readOnlyHint: true, openWorldHint: false },
      icons: [{ src: 'https://cdn.example/icon.png' }],
      execution: { taskSupport: 'forbidden' },
    });
    // a fixed field order, the values as published; unknown top-level fields and _meta stay private
    expect(JSON.stringify(published)).toBe(
      '{"name":"r.full","title":"Full report","description":"Builds the full report.",' +
        '"inputSchema":{"type":"object","properties":{}},' +
        '"outputSchema":{"type":"object","properties":{"rows":{"type":"integer"}}},' +
        '"annotations":{"readOnlyHint":true,"openWorldHint":false},' +
        '"icons":[{"src":"https://cdn.example/icon.png"}],"execution":{"taskSupport":"forbidden"}}',
    );
  });

  it('leaves optional fields absent rather than null when the manifest omits them', async () => {
    const minTool = (await accept(manifest([tool('r.min')]))).tools[0];
    const published = minTool && publishedToolOf(minTool);
    expect(Object.keys(published ?? {})).toEqual(['name', 'description', 'inputSchema']);
  });

  it('rejects a title that is not a string and annotations that are not an object with ManifestShapeError', async () => {
    const { types, details } = await reject(
      manifest([tool('r.a', { title: 5 }), tool('r.b', { annotations: [] })]),
    );
    expect(types).toEqual(['ManifestShapeError', 'ManifestShapeError']);
    expect(details).toEqual([
      'tools[0] "r.a": title must be a string when present',
      'tools[1] "r.b": annotations must be an object when present',
    ]);
  });
});

describe('per-bundle tool limit (contract §7.3: maxToolsPerBundle)', () => {
  it('rejects more enabled tools than maxToolsPerBundle with TooManyToolsError', async () => {
    const { errorType, details } = await reject(manifest([tool('r.a'), tool('r.b'), tool('r.c')]), {
      ...EXPECT,
      maxToolsPerBundle: 2,
    });
    expect(errorType).toBe('TooManyToolsError');
    expect(details).toEqual(['3 enabled tools exceed maxToolsPerBundle 2']);
  });

  it('accepts exactly maxToolsPerBundle enabled tools', async () => {
    const accepted = await accept(manifest([tool('r.a'), tool('r.b')]), {
      ...EXPECT,
      maxToolsPerBundle: 2,
    });
    expect(accepted.tools).toHaveLength(2);
  });

  it('does not count _meta.enabled: false tools against maxToolsPerBundle', async () => {
    const off = { version: '1', enabled: false };
    const accepted = await accept(
      manifest([
        tool('r.a'),
        tool('r.off1', { _meta: off }),
        tool('r.b'),
        tool('r.off2', { _meta: off }),
        tool('r.off3', { _meta: off }),
      ]),
      { ...EXPECT, maxToolsPerBundle: 2 },
    );
    expect(accepted.tools.map((t) => [t.name, t.enabled])).toEqual([
      ['r.a', true],
      ['r.b', true],
      ['r.off1', false],
      ['r.off2', false],
      ['r.off3', false],
    ]);
  });
});

describe('one bad tool rejects the bundle, and every problem is listed (contract §7.1)', () => {
  it('lists every problem, each naming tools[i] and the tool name; errorType is the first problem', async () => {
    const { errorType, types, details } = await reject(
      manifest([
        tool('r.ok'),
        tool('other.x'),
        tool('r.nodesc', { description: '' }),
        tool('r.schema', { inputSchema: { type: 'string' } }),
        tool('r.meta', { _meta: { version: '1', timeoutMillis: 0 } }),
        tool('r.ok'),
      ]),
    );
    expect(errorType).toBe('ToolNamePrefixError');
    expect(types).toEqual([
      'ToolNamePrefixError',
      'ToolDescriptionError',
      'InputSchemaError',
      'ToolMetaError',
      'DuplicateToolNameError',
    ]);
    expect(details.map((d) => d.slice(0, d.indexOf(':')))).toEqual([
      'tools[1] "other.x"',
      'tools[2] "r.nodesc"',
      'tools[3] "r.schema"',
      'tools[4] "r.meta"',
      'tools[5] "r.ok"',
    ]);
  });

  it('lists several problems of one tool', async () => {
    const { types } = await reject(
      manifest([{ name: 'bad name', inputSchema: [], _meta: { timeoutMillis: -5 } }]),
    );
    expect(types).toEqual([
      'ToolNamePatternError',
      'ToolDescriptionError',
      'InputSchemaError',
      'ToolVersionError',
      'ToolMetaError',
    ]);
  });

  it('keeps the bundleId problem first next to tool problems', async () => {
    const { errorType, types } = await reject({
      bundleId: 'other',
      tools: [tool('r.a', { description: '' })],
    });
    expect(errorType).toBe('BundleIdMismatchError');
    expect(types).toEqual(['BundleIdMismatchError', 'ToolDescriptionError']);
  });

  it('caps the problem list at 20 entries', async () => {
    const tools = Array.from({ length: 30 }, (_, i) => tool(`r.t${i}`, { description: '' }));
    const { details } = await reject(manifest(tools), { ...EXPECT, maxToolsPerBundle: 100 });
    expect(details).toHaveLength(20);
    expect(details[19]).toBe('tools[19] "r.t19": description must be a non-empty string');
  });

  it('returns the revision of a rejected manifest for the log', async () => {
    const result = await validateManifest(manifest([tool('x.a')]), EXPECT, new SchemaChecker());
    expect(result.ok).toBe(false);
    expect(!result.ok && result.revision).toBe('7');
  });
});

describe('fingerprint: equal content, equal fingerprint', () => {
  const build = (): Record<string, unknown> =>
    manifest([tool('r.a', { _meta: { version: '1', timeoutMillis: 500 } }), tool('r.b')]);

  async function fingerprintOf(body: unknown): Promise<string> {
    return (await accept(body)).fingerprint;
  }

  it('is equal for equal manifests (separately built, validated by separate checkers)', async () => {
    const a = await fingerprintOf(build());
    const b = await fingerprintOf(build());
    expect(a).toBe(b);
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('differs when a schema changes', async () => {
    const changed = build();
    (changed.tools as Record<string, unknown>[])[1]!.inputSchema = {
      type: 'object',
      properties: { q: { type: 'integer' } },
    };
    expect(await fingerprintOf(changed)).not.toBe(await fingerprintOf(build()));
  });

  it.each([
    ['the revision', (m: Record<string, unknown>) => (m.revision = '8')],
    [
      'a tool version',
      (m: Record<string, unknown>) =>
        ((m.tools as Record<string, unknown>[])[1]!._meta = { version: '2' }),
    ],
    [
      'a timeout',
      (m: Record<string, unknown>) =>
        ((m.tools as Record<string, unknown>[])[0]!._meta = { version: '1', timeoutMillis: 501 }),
    ],
    [
      'enabled',
      (m: Record<string, unknown>) =>
        ((m.tools as Record<string, unknown>[])[1]!._meta = { version: '1', enabled: false }),
    ],
    ['the tool order', (m: Record<string, unknown>) => (m.tools as unknown[]).reverse()],
  ])('differs when %s changes', async (_label, change) => {
    const changed = build();
    change(changed);
    expect(await fingerprintOf(changed)).not.toBe(await fingerprintOf(build()));
  });

  it('is not changed by fields the gateway ignores (a manifest baseEndpoint)', async () => {
    expect(await fingerprintOf({ ...build(), baseEndpoint: 'http://x' })).toBe(
      await fingerprintOf(build()),
    );
  });

  it('keeps the accepted tools in name order, whatever the manifest order (the merge relies on it)', async () => {
    const accepted = await accept(manifest([tool('r.z'), tool('r.a'), tool('r.m')]));
    expect(accepted.tools.map((t: ManifestTool) => t.name)).toEqual(['r.a', 'r.m', 'r.z']);
  });
});

describe('every MCP 2025-11-25 Tool field is published and type-checked (docs/operations.md §6 "Tool fields")', () => {
  it('publishes icons and execution {"taskSupport":"forbidden"} exactly as the manifest gave them', async () => {
    const icons = [
      {
        src: 'https://cdn.example/report.svg',
        mimeType: 'image/svg+xml',
        sizes: ['any'],
        theme: 'dark',
      },
      { src: 'data:image/png;base64,iVBORw0KGgo=', sizes: ['48x48', '96x96'] },
    ];
    const accepted = await accept(
      manifest([tool('r.a', { icons, execution: { taskSupport: 'forbidden' } })]),
    );
    const published = accepted.tools[0] && publishedToolOf(accepted.tools[0]);
    expect(published?.icons).toEqual(icons);
    expect(published?.execution).toEqual({ taskSupport: 'forbidden' });
  });

  it.each([['optional'], ['required']])('accepts execution.taskSupport "%s"', async (value) => {
    await expect(
      accept(manifest([tool('r.a', { execution: { taskSupport: value } })])),
    ).resolves.toBeDefined();
  });

  it('accepts every annotation hint and annotations.title, and members the spec does not name', async () => {
    const annotations = {
      title: 'Report',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
      'x-team': 'reports',
    };
    const accepted = await accept(manifest([tool('r.a', { annotations })]));
    expect((accepted.tools[0] && publishedToolOf(accepted.tools[0]))?.annotations).toEqual(
      annotations,
    );
  });

  it.each([
    ['title a number', { title: 5 }, 'title must be a string when present'],
    ['annotations an array', { annotations: [] }, 'annotations must be an object when present'],
    [
      'annotations.readOnlyHint a string',
      { annotations: { readOnlyHint: 'yes' } },
      'annotations.readOnlyHint must be true or false when present',
    ],
    [
      'annotations.title a number',
      { annotations: { title: 1 } },
      'annotations.title must be a string when present',
    ],
    ['icons an object', { icons: { src: 'x' } }, 'icons must be an array when present'],
    ['an icon a string', { icons: ['https://x.example/i.png'] }, 'icons[0] must be an object'],
    [
      'an icon without src',
      { icons: [{ mimeType: 'image/png' }] },
      'icons[0].src must be a non-empty string (a URI)',
    ],
    [
      'an icon mimeType a number',
      { icons: [{ src: 'a', mimeType: 1 }] },
      'icons[0].mimeType must be a string when present',
    ],
    [
      'icon sizes a string',
      { icons: [{ src: 'a' }, { src: 'b', sizes: '48x48' }] },
      'icons[1].sizes must be an array of strings when present',
    ],
    [
      'an icon theme "blue"',
      { icons: [{ src: 'a', theme: 'blue' }] },
      'icons[0].theme must be "light" or "dark" when present',
    ],
    ['execution a string', { execution: 'forbidden' }, 'execution must be an object when present'],
    [
      'execution.taskSupport "never"',
      { execution: { taskSupport: 'never' } },
      'execution.taskSupport must be "forbidden", "optional" or "required" when present',
    ],
  ])('rejects %s with ManifestShapeError naming the field', async (_label, over, rule) => {
    const { types, details } = await reject(manifest([tool('r.a', over)]));
    expect(types).toEqual(['ManifestShapeError']);
    expect(details).toEqual([`tools[0] "r.a": ${rule}`]);
  });

  it('changes the fingerprint when icons or execution change (a changed tool is a catalog change)', async () => {
    const a = await accept(manifest([tool('r.a', { execution: { taskSupport: 'forbidden' } })]));
    const b = await accept(manifest([tool('r.a', { execution: { taskSupport: 'optional' } })]));
    expect(a.fingerprint).not.toBe(b.fingerprint);
  });
});

describe('schema dialects: MCP 2025-11-25, 2020-12 only when $schema is absent (docs/operations.md §6 "Schema dialects")', () => {
  const withSchema = (uri: string): Record<string, unknown> => ({
    $schema: uri,
    type: 'object',
    properties: { text: { type: 'string' } },
    required: ['text'],
  });

  it.each([
    ['draft-07 (the official TypeScript SDK)', 'http://json-schema.org/draft-07/schema#'],
    ['draft-07 without #', 'http://json-schema.org/draft-07/schema'],
    ['2019-09', 'https://json-schema.org/draft/2019-09/schema'],
    ['2020-12', 'https://json-schema.org/draft/2020-12/schema'],
    ['draft-06', 'http://json-schema.org/draft-06/schema#'],
  ])(
    'accepts an inputSchema and an outputSchema declaring %s and publishes them unchanged',
    async (_l, uri) => {
      const accepted = await accept(
        manifest([tool('r.a', { inputSchema: withSchema(uri), outputSchema: withSchema(uri) })]),
      );
      const published = accepted.tools[0] && publishedToolOf(accepted.tools[0]);
      expect(published?.inputSchema).toEqual(withSchema(uri));
      expect(published?.outputSchema).toEqual(withSchema(uri));
      expect(accepted.tools[0]?.publishedJson).toContain(JSON.stringify(uri));
    },
  );

  it('rejects an unknown $schema with InputSchemaError; the URI is in the log-only cause', async () => {
    const uri = 'http://json-schema.org/draft-04/schema#';
    const { errorType, details, causes } = await reject(
      manifest([tool('r.a', { inputSchema: withSchema(uri) })]),
    );
    expect(errorType).toBe('InputSchemaError');
    expect(details).toEqual([
      'tools[0] "r.a": inputSchema $schema is not a supported JSON Schema dialect (draft-06, draft-07, 2019-09, 2020-12; none means 2020-12)',
    ]);
    expect(causes).toEqual([`$schema ${uri}`]);
  });

  it('rejects an unknown $schema on an outputSchema with OutputSchemaError', async () => {
    const { errorType, causes } = await reject(
      manifest([tool('r.a', { outputSchema: withSchema('https://example.test/my-meta') })]),
    );
    expect(errorType).toBe('OutputSchemaError');
    expect(causes).toEqual(['$schema https://example.test/my-meta']);
  });

  it('names the declared dialect when a schema breaks its rules', async () => {
    const { details } = await reject(
      manifest([
        tool('r.a', {
          inputSchema: { ...withSchema('http://json-schema.org/draft-07/schema#'), required: 'x' },
        }),
      ]),
    );
    expect(details).toEqual([
      'tools[0] "r.a": inputSchema does not compile as JSON Schema draft-07',
    ]);
  });
});
